/// The few bytes a daemon and a relay exchange before the relay starts forwarding
/// (`protocol/relay.md`): the daemon's preamble naming its rendezvous value, and the relay's
/// one-status reply. Everything after the reply is the peer protocol, end to end.
///
/// Preamble: `quire-relay 1\n` (14 bytes), one byte `n` (16...64), then `n` bytes of rendezvous
/// value: at most 79 bytes. Reply: the same 14 bytes and one status byte.
///
/// Guarantees: the parsers look at no more than `maximumPreambleBytes` (or `replyBytes`) bytes,
/// refuse at the first byte that cannot start a valid preamble (so junk is told apart at once),
/// and never allocate more than what they were given.
public enum RelayWire {
    /// Both the preamble and the reply start with this line; the `1` is the relay protocol's version.
    public static let magic: [UInt8] = Array("quire-relay 1\n".utf8)
    /// The lengths a rendezvous value may have.
    public static let rendezvousLengths = 16...64
    /// The longest preamble: the magic, the length byte, and the longest value.
    public static var maximumPreambleBytes: Int { magic.count + 1 + rendezvousLengths.upperBound }
    /// A reply's length: the magic and the status byte.
    public static var replyBytes: Int { magic.count + 1 }

    /// What the relay answers: the role in the peer handshake, or why it will not pair.
    public enum Status: UInt8, Sendable {
        /// Paired; this side was there first and *accepts* in the peer handshake.
        case accept = 0x61   // "a"
        /// Paired; this side arrived second and *connects* in the peer handshake.
        case connect = 0x63  // "c"
        /// No partner came within the relay's waiting time; dial again.
        case expired = 0x65  // "e"
        /// The relay is full (in all, or from this address); dial again later.
        case full = 0x66     // "f"
    }

    /// The preamble for `rendezvous` (whose length must be in `rendezvousLengths`).
    public static func preamble(rendezvous: [UInt8]) -> [UInt8] {
        precondition(rendezvousLengths.contains(rendezvous.count), "a rendezvous value has 16 to 64 bytes")
        return magic + [UInt8(rendezvous.count)] + rendezvous
    }

    public static func reply(_ status: Status) -> [UInt8] { magic + [status.rawValue] }

    /// How far a prefix of the stream goes towards a preamble or a reply.
    public enum Parsed<Value: Equatable & Sendable>: Equatable, Sendable {
        /// Valid so far; more bytes are needed.
        case incomplete
        /// Complete: the value, and how many bytes it took (anything after them is not its own).
        case complete(Value, consumed: Int)
        /// Not a preamble or reply, and no more bytes can make it one.
        case invalid(String)
    }

    /// Parses the start of what a dialer sent.
    public static func parsePreamble(_ bytes: [UInt8]) -> Parsed<[UInt8]> {
        if let refusal: Parsed<[UInt8]> = checkMagic(bytes, what: "a Quire relay preamble") { return refusal }
        guard bytes.count > magic.count else { return .incomplete }
        let length = Int(bytes[magic.count])
        guard rendezvousLengths.contains(length) else {
            return .invalid("a rendezvous value of \(length) bytes (16 to 64 are allowed)")
        }
        let end = magic.count + 1 + length
        guard bytes.count >= end else { return .incomplete }
        return .complete(Array(bytes[(magic.count + 1)..<end]), consumed: end)
    }

    /// Parses the start of what the relay answered.
    public static func parseReply(_ bytes: [UInt8]) -> Parsed<Status> {
        if let refusal: Parsed<Status> = checkMagic(bytes, what: "a Quire relay's reply") { return refusal }
        guard bytes.count > magic.count else { return .incomplete }
        guard let status = Status(rawValue: bytes[magic.count]) else {
            return .invalid("an unknown relay status \(bytes[magic.count])")
        }
        return .complete(status, consumed: replyBytes)
    }

    private static func checkMagic<Value>(_ bytes: [UInt8], what: String) -> Parsed<Value>? {
        for (index, byte) in bytes.prefix(magic.count).enumerated() where byte != magic[index] {
            return .invalid("not \(what)")
        }
        return bytes.count < magic.count ? .incomplete : nil
    }
}
