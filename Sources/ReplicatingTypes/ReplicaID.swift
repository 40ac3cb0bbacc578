/// The identity of one replica (one daemon, or one participant in a test).
///
/// Guarantees: totally ordered, so it breaks ties between equal Lamport counters deterministically.
/// Always injected by the caller (a persisted random value in the daemon, small fixed numbers in
/// tests); this library never draws one from a clock or a random source on its own.
public struct ReplicaID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    public static func < (lhs: ReplicaID, rhs: ReplicaID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "r\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Version of the binary and Codable formats this library writes.
public enum ReplicatingTypesInfo {
    public static let formatVersion = 1
}
