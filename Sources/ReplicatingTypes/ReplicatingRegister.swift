/// A last-writer-wins register: holds one value; the write with the larger Lamport timestamp wins.
///
/// Guarantees: concurrent writes resolve by (Lamport counter, replica), never by wall clock, so every
/// replica picks the same winner. A local write always beats everything this register has seen.
public struct ReplicatingRegister<Value> {
    public private(set) var value: Value
    public private(set) var timestamp: LamportTimestamp
    /// The replica that makes this copy's local writes; not part of the replicated state.
    public var replica: ReplicaID

    public init(_ value: Value, replica: ReplicaID) {
        self.value = value
        self.timestamp = LamportTimestamp(counter: 0, replica: replica)
        self.replica = replica
    }

    /// A register holding `value` as written at `timestamp`: the state a peer sent (one write of
    /// it), to merge into a local copy; `replica` makes this copy's later local writes.
    public init(_ value: Value, timestamp: LamportTimestamp, replica: ReplicaID) {
        self.value = value
        self.timestamp = timestamp
        self.replica = replica
    }

    /// Writes `newValue` with a timestamp newer than any seen by this register; returns false,
    /// changing nothing, when the timestamp it has seen is the last one (merged from a copy that
    /// used `UInt64.max`).
    /// - Complexity: O(1)
    @discardableResult
    public mutating func set(_ newValue: Value) -> Bool {
        guard let next = timestamp.successor(by: replica) else { return false }
        value = newValue
        timestamp = next
        return true
    }
}

extension ReplicatingRegister: Replicable {
    public func merged(with other: ReplicatingRegister) -> ReplicatingRegister {
        var result = self
        if other.timestamp > timestamp {
            result.value = other.value
            result.timestamp = other.timestamp
        }
        return result
    }
}

extension ReplicatingRegister: Equatable where Value: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.value == rhs.value && lhs.timestamp == rhs.timestamp
    }
}

extension ReplicatingRegister: Hashable where Value: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
        hasher.combine(timestamp)
    }
}

extension ReplicatingRegister: Sendable where Value: Sendable {}

extension ReplicatingRegister: Codable where Value: Codable {
    private enum CodingKeys: String, CodingKey { case value, timestamp, replica }
}
