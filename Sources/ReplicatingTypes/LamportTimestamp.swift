/// A Lamport timestamp: a logical counter paired with the replica that produced it.
///
/// Guarantees: a total order (counter first, then replica) that respects causality: anything a
/// replica produces after seeing a timestamp `t` gets a larger timestamp than `t`. No wall clock.
public struct LamportTimestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var counter: UInt64
    public var replica: ReplicaID

    public init(counter: UInt64, replica: ReplicaID) {
        self.counter = counter
        self.replica = replica
    }

    public static func < (lhs: LamportTimestamp, rhs: LamportTimestamp) -> Bool {
        lhs.counter != rhs.counter ? lhs.counter < rhs.counter : lhs.replica < rhs.replica
    }

    /// The next timestamp `replica` issues after having seen `self`; nil when the counter has
    /// none left (a counter from elsewhere may be `UInt64.max`: no trap, no wrap-around).
    public func successor(by replica: ReplicaID) -> LamportTimestamp? {
        counter < .max ? LamportTimestamp(counter: counter + 1, replica: replica) : nil
    }

    public var description: String { "\(counter)@\(replica)" }
}
