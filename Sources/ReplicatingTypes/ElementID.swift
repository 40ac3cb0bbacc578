/// The identity of one element of a `ReplicatingArray`: the replica that inserted it and that
/// replica's insertion counter (0, 1, 2, … for every element it ever inserted).
///
/// Guarantees: unique across all replicas forever; stable under every edit and merge.
public struct ElementID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var replica: ReplicaID
    public var counter: UInt64

    public init(replica: ReplicaID, counter: UInt64) {
        self.replica = replica
        self.counter = counter
    }

    public static func < (lhs: ElementID, rhs: ElementID) -> Bool {
        lhs.replica != rhs.replica ? lhs.replica < rhs.replica : lhs.counter < rhs.counter
    }

    public var description: String { "\(replica):\(counter)" }
}

/// `count` consecutive element IDs of one replica, starting at `start`.
public struct ElementIDRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public var start: ElementID
    public var count: UInt64

    public init(start: ElementID, count: UInt64) {
        self.start = start
        self.count = count
    }

    public var counters: Range<UInt64> { start.counter..<(start.counter + count) }

    public var description: String { "\(start)+\(count)" }
}

/// How many elements of each replica a `ReplicatingArray` holds; since each replica numbers its
/// insertions 0, 1, 2, …, this says exactly which insertions a copy has.
///
/// Guarantees: `merged(with:)` is the pointwise maximum (a join), so it is itself a CRDT.
public struct VersionVector: Hashable, Sendable, Codable, CustomStringConvertible {
    public private(set) var counts: [ReplicaID: UInt64]

    public init(_ counts: [ReplicaID: UInt64] = [:]) {
        self.counts = counts.filter { $0.value > 0 }
    }

    public subscript(replica: ReplicaID) -> UInt64 {
        get { counts[replica] ?? 0 }
        set { counts[replica] = newValue == 0 ? nil : newValue }
    }

    public func contains(_ id: ElementID) -> Bool { id.counter < self[id.replica] }

    /// True when this vector has seen everything `other` has.
    public func dominates(_ other: VersionVector) -> Bool {
        other.counts.allSatisfy { self[$0.key] >= $0.value }
    }

    /// Total number of insertions counted.
    public var total: UInt64 { counts.values.reduce(0, +) }

    public var description: String {
        "[" + counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}

extension VersionVector: Replicable {
    public func merged(with other: VersionVector) -> VersionVector {
        VersionVector(counts.merging(other.counts, uniquingKeysWith: Swift.max))
    }
}
