/// An array that many replicas edit concurrently and that always converges: a replicated growable
/// array (RGA) built for real editing traces.
///
/// Model: every element ever inserted has an `ElementID` (replica, counter), a Lamport counter, and
/// an anchor, the element it was inserted after. Document order is a depth-first walk of the anchor
/// tree with siblings newest first (by Lamport counter, then replica). Removed elements stay as
/// tombstones without content so later insertions can still anchor to them.
///
/// Storage: consecutive insertions by one replica are one run record; runs live in leaves of up to
/// about a thousand visible elements, a B+ tree of visible counts (and, when `paragraphBreak` is
/// given, break counts) over the leaves finds an index or a paragraph in O(log n) plus a scan of
/// one leaf, and an ID index finds an element's leaf in O(1).
///
/// Invariants (checked by `_checkInvariants()`):
/// 1. Each leaf's content is exactly the elements of its visible runs, in order; its break count
///    matches; every branch's counts are the sums of its children's; all leaves are at one depth
///    and the leaf list follows tree order.
/// 2. For every replica, counters 0..<n each appear in exactly one run, and the ID index maps each
///    to the leaf holding it.
/// 3. Every run's anchor exists and comes earlier in document order, with a smaller Lamport counter.
/// 4. Every leaf is within its capacity (visible elements and runs), and only the first leaf may be
///    empty; leaves and branches not in the tree are on the free lists.
///
/// Value semantics: copies share storage until one of them is mutated.
public struct ReplicatingArray<Element> {
    var storage: ReplicatingArrayStorage<Element>
    /// The replica that makes this copy's local edits; not part of the replicated state.
    public var replica: ReplicaID
    let paragraphBreak: ((Element) -> Bool)?

    /// An empty array edited locally as `replica`. When `paragraphBreak` is given, breaks are
    /// counted per leaf and per branch, so paragraphs (elements up to and including a break) are
    /// found in O(log n) plus a scan of one leaf.
    public init(replica: ReplicaID, paragraphBreak: ((Element) -> Bool)? = nil) {
        self.replica = replica
        self.paragraphBreak = paragraphBreak
        self.storage = ReplicatingArrayStorage(isBreak: paragraphBreak)
    }

    /// An array holding `elements`, inserted by `replica`.
    public init<S: Sequence>(_ elements: S, replica: ReplicaID, paragraphBreak: ((Element) -> Bool)? = nil) where S.Element == Element {
        self.init(replica: replica, paragraphBreak: paragraphBreak)
        insert(contentsOf: Array(elements), at: 0)
    }

    @inline(__always)
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    // MARK: Reading

    /// Number of visible elements. - Complexity: O(1)
    public var count: Int { storage.count }

    public var isEmpty: Bool { storage.count == 0 }

    /// The visible element at `index`. - Complexity: O(log n)
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "ReplicatingArray index out of range")
        let (leaf, i) = storage.leaf(holding: index)
        return storage.leaves[leaf].content[i]
    }

    /// All visible elements in order. - Complexity: O(n)
    public var elements: [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        var leaf: Int? = ReplicatingArrayStorage<Element>.firstLeaf
        while let l = leaf {
            result.append(contentsOf: storage.leaves[l].content)
            leaf = storage.leaf(after: l)
        }
        return result
    }

    /// Visible elements in `range`. - Complexity: O(log n + range.count)
    public func elements(in range: Range<Int>) -> [Element] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ReplicatingArray range out of bounds")
        return storage.elements(in: range)
    }

    /// The ID of the visible element at `index`. - Complexity: O(log n)
    public func id(at index: Int) -> ElementID {
        precondition(index >= 0 && index < count, "ReplicatingArray index out of range")
        let (leaf, i) = storage.leaf(holding: index)
        return storage.id(visible: i, inLeaf: leaf)
    }

    /// The current index of the element `id`, or nil if this copy does not have it or it was
    /// removed. - Complexity: O(log n)
    public func index(of id: ElementID) -> Int? {
        guard let replica = storage.index(of: id.replica),
              let found = storage.element(replica: replica, counter: id.counter),
              !found.stored.isDeleted
        else { return nil }
        return storage.start(of: found.leaf).visible + found.contentStart + found.offset
    }

    /// The index where an element inserted right after `id` would appear: the index after `id`
    /// when visible, else the position its tombstone occupies; nil if unknown. Anchors positions
    /// (cursors) to elements. - Complexity: O(log n)
    public func index(after id: ElementID) -> Int? {
        guard let replica = storage.index(of: id.replica),
              let found = storage.element(replica: replica, counter: id.counter)
        else { return nil }
        let visibleOffset = found.stored.isDeleted ? 0 : found.offset + 1
        return storage.start(of: found.leaf).visible + found.contentStart + visibleOffset
    }

    /// How many elements of each replica this copy has.
    /// - Complexity: O(replicas)
    public var versionVector: VersionVector {
        var counts: [ReplicaID: UInt64] = [:]
        for (i, replica) in storage.replicas.enumerated() { counts[replica] = UInt64(storage.idIndex[i].count) }
        return VersionVector(counts)
    }

    /// True when `id` is stored right after `previous` with nothing between them, not even a
    /// removed element (one run, or the end of one run and the start of the next). False when
    /// that cannot be told cheaply.
    /// - Complexity: O(log n)
    public func isDirectlyAfter(_ id: ElementID, _ previous: ElementID) -> Bool {
        guard id.replica == previous.replica, id.counter == previous.counter &+ 1,
              let replica = storage.index(of: id.replica),
              let before = storage.element(replica: replica, counter: previous.counter),
              let (otherLeaf, otherRun, otherOffset) = storage.locate(replica: replica, counter: id.counter)
        else { return false }
        let (leaf, run, offset) = (before.leaf, before.run, before.offset)
        if leaf == otherLeaf && run == otherRun { return true }
        // The end of one run and the start of the next, in this leaf or the next one.
        guard offset == Int(before.stored.length) - 1, otherOffset == 0, otherRun == (leaf == otherLeaf ? run + 1 : 0) else { return false }
        return leaf == otherLeaf || (run == before.runCount - 1 && storage.leaf(after: leaf) == otherLeaf)
    }

    /// True when this copy has the element `id` (visible or removed).
    public func contains(_ id: ElementID) -> Bool { storage.contains(id) }

    /// Number of operations received but not yet applicable (waiting for what they depend on).
    public var pendingOperationCount: Int {
        storage.pendingInsertions.count + storage.pendingRemovals.values.reduce(0) { $0 + $1.count }
    }

    // MARK: Local edits

    /// Inserts `newElements` at `index`; returns the operation to ship to other replicas (nil when
    /// there was nothing to insert, or when the Lamport clock has no counters left for it: see
    /// `canInsertLocally(count:)`; nothing changes then). - Complexity: O(log n + k + size of one leaf)
    @discardableResult
    public mutating func insert<C: Collection>(contentsOf newElements: C, at index: Int) -> ReplicatingArrayOperation<Element>? where C.Element == Element {
        precondition(index >= 0 && index <= count, "ReplicatingArray insertion index out of range")
        let n = newElements.count
        guard n > 0 else { return nil }
        precondition(n <= ReplicatingArrayStorage<Element>.maxRunLength, "insertion too long")
        guard canInsertLocally(count: n) else { return nil }
        makeUnique()
        let (anchor, counter, lamport) = storage.insertLocally(newElements, at: index, replica: replica)
        return .insert(ReplicatingArrayInsertion(
            id: ElementID(replica: replica, counter: counter), lamport: lamport, anchor: anchor,
            content: .elements(InsertedElements(newElements))))
    }

    /// Inserts `newElements` right after the element `id` (visible or removed, not compacted
    /// away; nil: at the start), ahead of anything inserted after it before; returns the operation
    /// to ship (nil when there was nothing to insert, `id` is unknown or compacted away, or the
    /// Lamport clock has no counters left for it).
    /// Restores removed text exactly where it was.
    /// - Complexity: O(log n + k + size of one leaf)
    @discardableResult
    public mutating func insert<C: Collection>(contentsOf newElements: C, after id: ElementID?) -> ReplicatingArrayOperation<Element>? where C.Element == Element {
        guard !newElements.isEmpty, canInsertLocally(count: newElements.count), id.map({ contains($0) && !isCompacted($0) }) ?? true else { return nil }
        let me = storage.index(of: replica).map { Int($0) }
        let counter = me.map { UInt64(storage.idIndex[$0].count) } ?? 0
        let operation = ReplicatingArrayOperation.insert(ReplicatingArrayInsertion(
            id: ElementID(replica: replica, counter: counter), lamport: storage.maxLamport + 1, anchor: id,
            content: .elements(InsertedElements(newElements))))
        apply(operation)
        return operation
    }

    /// Inserts one element at `index`; returns the operation to ship.
    @discardableResult
    public mutating func insert(_ element: Element, at index: Int) -> ReplicatingArrayOperation<Element> {
        // A one-element insertion always yields an operation.
        insert(contentsOf: CollectionOfOne(element), at: index) ?? .remove([])
    }

    @discardableResult
    public mutating func append(_ element: Element) -> ReplicatingArrayOperation<Element> {
        insert(element, at: count)
    }

    /// Removes the elements in `range`; returns the operation to ship (nil for an empty range).
    /// - Complexity: O(log n + k + size of the leaves touched)
    @discardableResult
    public mutating func removeSubrange(_ range: Range<Int>) -> ReplicatingArrayOperation<Element>? {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "ReplicatingArray range out of bounds")
        guard !range.isEmpty else { return nil }
        makeUnique()
        let ranges = storage.removeLocally(range)
        return .remove(ranges)
    }

    /// Removes the element at `index`; returns the operation to ship.
    @discardableResult
    public mutating func remove(at index: Int) -> ReplicatingArrayOperation<Element> {
        removeSubrange(index..<(index + 1)) ?? .remove([])
    }

    /// Replaces `range` with `newElements` (a removal, then an insertion at the same place);
    /// returns the operations to ship, in order.
    @discardableResult
    public mutating func replaceSubrange<C: Collection>(_ range: Range<Int>, with newElements: C) -> [ReplicatingArrayOperation<Element>] where C.Element == Element {
        var operations: [ReplicatingArrayOperation<Element>] = []
        if let removal = removeSubrange(range) { operations.append(removal) }
        if let insertion = insert(contentsOf: newElements, at: range.lowerBound) { operations.append(insertion) }
        return operations
    }
}

extension ReplicatingArray: CustomStringConvertible {
    public var description: String { "ReplicatingArray(\(elements))" }
}

extension ReplicatingArray: @unchecked Sendable where Element: Sendable {}
