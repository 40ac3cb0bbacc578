@testable import ReplicatingTypes

/// A plain replicated-growable-array: every element ever inserted, tombstones included, in one
/// array in document order, with its ID, Lamport counter and anchor. Built for tests as the
/// simplest thing that is obviously right: an insertion goes right after its anchor, past every
/// element with a newer timestamp (those are newer siblings and their descendants), in O(n).
/// Operations must be applied in a causal order (each after its anchor and its replica's earlier
/// insertions), for example the order in which replicas made them.
struct RGAOracle {
    struct Element: Equatable {
        var id: ElementID
        var lamport: UInt64
        var value: Unicode.Scalar
        var visible: Bool

        var timestamp: LamportTimestamp { LamportTimestamp(counter: lamport, replica: id.replica) }
    }

    private(set) var elements: [Element] = []

    var visible: [Unicode.Scalar] { elements.filter(\.visible).map(\.value) }
    var ids: [ElementID] { elements.map(\.id) }

    func position(of id: ElementID) -> Int? { elements.firstIndex { $0.id == id } }

    /// The visible index of `id`, or nil when it is removed or unknown.
    func visibleIndex(of id: ElementID) -> Int? {
        var index = 0
        for element in elements {
            if element.id == id { return element.visible ? index : nil }
            if element.visible { index += 1 }
        }
        return nil
    }

    /// Where an insertion right after `id` would appear among the visible elements.
    func visibleIndex(after id: ElementID) -> Int? {
        var index = 0
        for element in elements {
            if element.visible { index += 1 }
            if element.id == id { return index }
        }
        return nil
    }

    mutating func apply(_ operation: ReplicatingArrayOperation<Unicode.Scalar>) {
        switch operation {
        case .insert(let insertion):
            if let position = position(of: insertion.id) {
                // A duplicate: it must be the same insertion.
                precondition(elements[position].lamport == insertion.lamport, "oracle: a different insertion under a known ID")
                return
            }
            var at = 0
            if let anchor = insertion.anchor {
                guard let anchorPosition = position(of: anchor) else { preconditionFailure("oracle: anchor \(anchor) not applied yet") }
                at = anchorPosition + 1
            }
            let stamp = insertion.timestamp
            while at < elements.count, elements[at].timestamp > stamp { at += 1 }
            let values: [Unicode.Scalar?]
            switch insertion.content {
            case .elements(let inserted): values = inserted.map { $0 }
            case .removed(let count): values = Array(repeating: nil, count: count)
            }
            let new = values.enumerated().map { k, value in
                Element(id: ElementID(replica: insertion.id.replica, counter: insertion.id.counter + UInt64(k)),
                        lamport: insertion.lamport + UInt64(k), value: value ?? "?", visible: value != nil)
            }
            elements.insert(contentsOf: new, at: at)
        case .remove(let ranges):
            for range in ranges {
                for i in elements.indices where elements[i].id.replica == range.start.replica && range.counters.contains(elements[i].id.counter) {
                    elements[i].visible = false
                }
            }
        }
    }

    /// Drops every removed element (a compaction every copy made at one synchronized point).
    mutating func dropTombstones() {
        elements.removeAll { !$0.visible }
    }
}

extension ReplicatingArray {
    /// Every stored element's ID in document order, tombstones included.
    var allIDsInOrder: [ElementID] {
        canonicalRuns().flatMap { run in
            (0..<UInt64(run.length)).map { ElementID(replica: run.start.replica, counter: run.start.counter + $0) }
        }
    }

    /// The visible index at which each leaf in the tree starts, in document order.
    var leafStarts: [Int] {
        var starts: [Int] = []
        var offset = 0
        var leaf: Int? = ReplicatingArrayStorage<Element>.firstLeaf
        while let l = leaf {
            starts.append(offset)
            offset += storage.leaves[l].content.count
            leaf = storage.leaf(after: l)
        }
        return starts
    }
}
