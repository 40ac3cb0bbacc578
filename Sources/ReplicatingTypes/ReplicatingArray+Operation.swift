/// What one replica's edit of a `ReplicatingArray` ships to the others.
///
/// Guarantees: applying an operation twice is a no-op, and operations applied in any order that
/// respects causality (an insertion after its anchor; a removal after the insertion it removes,
/// or buffered until then) give the same array.
public enum ReplicatingArrayOperation<Element> {
    /// A run of elements inserted one after the other by one replica.
    case insert(ReplicatingArrayInsertion<Element>)
    /// Elements removed (they stay as tombstones so later inserts can still anchor to them).
    case remove(ElementIDRanges)
}

/// A run of `count` elements inserted by one replica: element `k` has ID `id.counter + k`,
/// Lamport counter `lamport + k`, and follows element `k - 1` (the first follows `anchor`).
public struct ReplicatingArrayInsertion<Element> {
    /// The content of an insertion: the elements, or only how many there were when they had
    /// already been removed by the time the run was shipped (tombstones carry no content).
    public enum Content {
        case elements(InsertedElements<Element>)
        case removed(count: Int)
    }

    public var id: ElementID
    public var lamport: UInt64
    /// The element the run's first element was inserted after; nil for the start of the array.
    public var anchor: ElementID?
    public var content: Content

    public init(id: ElementID, lamport: UInt64, anchor: ElementID?, content: Content) {
        self.id = id
        self.lamport = lamport
        self.anchor = anchor
        self.content = content
    }

    public var count: Int {
        switch content {
        case .elements(let e): return e.count
        case .removed(let n): return n
        }
    }

    /// The Lamport timestamp of the first element, which orders it among its siblings.
    public var timestamp: LamportTimestamp { LamportTimestamp(counter: lamport, replica: id.replica) }

    /// The same run without its first `n` elements (what is left to apply when a copy already has
    /// those).
    func droppingFirst(_ n: Int) -> ReplicatingArrayInsertion {
        let rest: Content
        switch content {
        case .elements(let e): rest = .elements(InsertedElements(e.dropFirst(n)))
        case .removed(let c): rest = .removed(count: c - n)
        }
        return ReplicatingArrayInsertion(
            id: ElementID(replica: id.replica, counter: id.counter + UInt64(n)),
            lamport: lamport + UInt64(n),
            anchor: ElementID(replica: id.replica, counter: id.counter + UInt64(n) - 1),
            content: rest)
    }
}

/// A visible change that applying remote operations made, in order; each position is valid at
/// the moment its change happens (after the changes before it), so an editor can replay them.
public enum ReplicatingArrayChange<Element> {
    case inserted(at: Int, elements: [Element])
    case removed(at: Int, elements: [Element])
}

extension ReplicatingArrayOperation: Sendable where Element: Sendable {}
extension ReplicatingArrayInsertion: Sendable where Element: Sendable {}
extension ReplicatingArrayInsertion.Content: Sendable where Element: Sendable {}
extension ReplicatingArrayChange: Sendable where Element: Sendable {}
extension ReplicatingArrayOperation: Equatable where Element: Equatable {}
extension ReplicatingArrayInsertion: Equatable where Element: Equatable {}
extension ReplicatingArrayInsertion.Content: Equatable where Element: Equatable {}
extension ReplicatingArrayChange: Equatable where Element: Equatable {}
extension ReplicatingArrayOperation: Codable where Element: Codable {}
extension ReplicatingArrayInsertion: Codable where Element: Codable {}
extension ReplicatingArrayInsertion.Content: Codable where Element: Codable {}
