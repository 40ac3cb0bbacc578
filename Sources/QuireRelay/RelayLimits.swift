/// The bounds that let a relay run on a public address (`protocol/relay.md`, *Bounds*). Every
/// connection, paired or not, is held to them; a connection past one is closed without
/// affecting any other.
public struct RelayLimits: Sendable {
    /// Connections held at once, in all (waiting, paired, or still sending their preamble).
    public var maximumConnections = 1024
    /// Unpaired connections (sending their preamble, or waiting for a partner) from one address.
    public var maximumUnpairedPerAddress = 8
    /// Seconds a new connection has to send its whole preamble.
    public var preambleTimeout = 5.0
    /// Seconds a connection waits for its partner before it is told `expired` and closed.
    public var waitTimeout = 120.0
    /// Seconds a pair may go without a byte either way before both connections are closed
    /// (daemons send a heartbeat every 5 seconds).
    public var idleTimeout = 90.0
    /// Bytes per second read from one connection (its partner's share is its own); a burst of
    /// one second's worth is allowed.
    public var bytesPerSecond = 4 << 20

    public init() {}

    /// Why a set of limits cannot be used (a zero, a negative, or a value too large to be meant).
    public func validate() throws(RelayError) {
        guard (1...1_000_000).contains(maximumConnections) else { throw RelayError("the connection limit must be 1 to 1,000,000") }
        guard (1...maximumConnections).contains(maximumUnpairedPerAddress) else {
            throw RelayError("the per-address limit must be 1 to the connection limit")
        }
        for (name, seconds) in [("preamble", preambleTimeout), ("wait", waitTimeout), ("idle", idleTimeout)] {
            guard seconds > 0, seconds <= 86_400 else { throw RelayError("the \(name) timeout must be more than 0 and at most 86,400 seconds") }
        }
        guard (1024...(1 << 30)).contains(bytesPerSecond) else { throw RelayError("bytes per second must be 1,024 to 2^30") }
    }
}

/// A relay that cannot start (a bad address or limit, a port in use).
public struct RelayError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
