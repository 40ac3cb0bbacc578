/// What `quire share` prints and `quire join` takes: everything a partner needs to reach and
/// authenticate the sharing daemon, as one copy-paste-safe word (`protocol/decisions/join-line.md`).
///
/// Holds the addresses to try (`host:port`, in order), optionally a relay address and a
/// rendezvous value, the link secret's key material (as `PeerSecret.material(from:)` gives it),
/// the host daemon's key fingerprint (the 16 bytes `PeerIdentity.fingerprint` shows in hex), and
/// the project's name, and whether the project is one file shared by itself (its only file is
/// named as the project).
///
/// Guarantees: a value that exists satisfies every bound below (the initializer and the decoder
/// check them), so its encoding is at most `maximumCharacters` long; `init(parsing:)` of any text
/// returns the value or a specific `JoinLineError`, in time linear in the text's length (capped),
/// and `JoinLine(parsing: line.encoded) == line`.
public struct JoinLine: Sendable, Equatable {
    public static let version = 1
    /// Every join line starts with this (then the version and `-`).
    public static let prefix = "qj"
    public static let maximumNameBytes = 100
    public static let maximumAddresses = 8
    public static let maximumAddressBytes = 255
    public static let secretBytes = 16...64
    public static let fingerprintBytes = 16
    public static let rendezvousBytes = 1...64
    public static let projectKeyBytes = 8
    /// No line longer than this (whitespace aside) is read.
    public static let maximumCharacters = 4400

    /// The project's name (a folder name: no `/`, no control character, not `.` or `..`).
    public let name: String
    /// Where the host listens, best first; may be empty only when there is a relay.
    public let addresses: [PeerAddress]
    /// The key material of the secret that admits a partner to the host's links.
    public let secret: [UInt8]
    /// The host daemon's key fingerprint, 16 bytes.
    public let fingerprint: [UInt8]
    public let relay: PeerAddress?
    /// A value the relay pairs the two sides by.
    public let rendezvous: [UInt8]?
    /// The project's key (8 bytes), when the secret is an invitation's rather than the project's
    /// member secret, from which the key is derived otherwise (protocol/decisions/roles.md).
    /// A line without it (made before invitations) still reads: its secret is the member secret.
    public let projectKey: [UInt8]?

    /// The project key as the daemon names projects (16 lowercase hex digits), when the line
    /// carries one.
    public var projectKeyText: String? { projectKey.map(Hex.encode) }
    /// The project is one file shared by itself (`quire share FILE`): its tree holds the file
    /// named `name` only, and nothing else in the joiner's folder is ever shared
    /// (protocol/decisions/roles.md, *A file shared by itself*). Such a name is also a valid
    /// `ProjectPath` (never `.git`).
    public let singleFile: Bool

    public init(name: String, addresses: [PeerAddress], secret: [UInt8], fingerprint: [UInt8],
                relay: PeerAddress? = nil, rendezvous: [UInt8]? = nil, projectKey: [UInt8]? = nil,
                singleFile: Bool = false) throws(JoinLineError) {
        try Self.checkName(name)
        if singleFile, (try? ProjectPath(name)) == nil {
            throw .invalid(part: .singleFile, "a file shared by itself has a name a project path can hold, got \(ProjectPath.shown(name))")
        }
        guard addresses.count <= Self.maximumAddresses else {
            throw .invalid(part: .addresses, "at most \(Self.maximumAddresses) addresses, got \(addresses.count)")
        }
        guard !addresses.isEmpty || relay != nil else {
            throw .invalid(part: .addresses, "a join line needs an address to try (or a relay)")
        }
        guard Self.secretBytes.contains(secret.count) else {
            throw .invalid(part: .secret, "the secret's key material has \(Self.secretBytes.lowerBound) to \(Self.secretBytes.upperBound) bytes, got \(secret.count)")
        }
        guard fingerprint.count == Self.fingerprintBytes else {
            throw .invalid(part: .fingerprint, "a key fingerprint has \(Self.fingerprintBytes) bytes, got \(fingerprint.count)")
        }
        if let rendezvous, !Self.rendezvousBytes.contains(rendezvous.count) {
            throw .invalid(part: .rendezvous, "a rendezvous value has \(Self.rendezvousBytes.lowerBound) to \(Self.rendezvousBytes.upperBound) bytes, got \(rendezvous.count)")
        }
        if let projectKey, projectKey.count != Self.projectKeyBytes {
            throw .invalid(part: .projectKey, "a project key has \(Self.projectKeyBytes) bytes, got \(projectKey.count)")
        }
        self.projectKey = projectKey
        self.singleFile = singleFile
        self.name = name
        self.addresses = addresses
        self.secret = secret
        self.fingerprint = fingerprint
        self.relay = relay
        self.rendezvous = rendezvous
    }

    /// The same, with the fingerprint as a person reads it (`3f1c-0a9e-…`; case and separators
    /// do not matter, 32 hex digits).
    public init(name: String, addresses: [PeerAddress], secret: [UInt8], fingerprint text: String,
                relay: PeerAddress? = nil, rendezvous: [UInt8]? = nil, projectKey: String? = nil,
                singleFile: Bool = false) throws(JoinLineError) {
        let digits = Array(text.lowercased().utf8.filter { Hex.value($0) != nil })
        let separators: Set<UInt8> = [UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: " ")]
        guard digits.count == 2 * Self.fingerprintBytes, text.utf8.count <= 4 * Self.fingerprintBytes,
              text.utf8.allSatisfy({ Hex.value($0) != nil || separators.contains($0) }) else {
            throw .invalid(part: .fingerprint, "a key fingerprint has 32 hex digits, got \(ProjectPath.shown(text))")
        }
        var keyBytes: [UInt8]?
        if let projectKey {
            let keyDigits = Array(projectKey.utf8)
            guard keyDigits.count == 2 * Self.projectKeyBytes, keyDigits.allSatisfy({ Hex.value($0) != nil }) else {
                throw .invalid(part: .projectKey, "a project key has 16 hex digits, got \(ProjectPath.shown(projectKey))")
            }
            keyBytes = Hex.decode(keyDigits)
        }
        try self.init(name: name, addresses: addresses, secret: secret, fingerprint: Hex.decode(digits),
                      relay: relay, rendezvous: rendezvous, projectKey: keyBytes, singleFile: singleFile)
    }

    /// The fingerprint as `PeerIdentity.fingerprint` shows it: hex in groups of four, `3f1c-0a9e-…`.
    public var fingerprintText: String {
        let hex = Hex.encode(fingerprint)
        return stride(from: 0, to: hex.count, by: 4).map { String(hex.dropFirst($0).prefix(4)) }.joined(separator: "-")
    }

    static func checkName(_ name: String) throws(JoinLineError) {
        guard !name.isEmpty, name.utf8.count <= maximumNameBytes else {
            throw .invalid(part: .name, "a project name has 1 to \(maximumNameBytes) bytes, got \(name.utf8.count)")
        }
        guard name != ".", name != "..", !name.unicodeScalars.contains("/"),
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalid(part: .name, "a project name is a folder name (no `/`, no control character, not `.` or `..`): \(ProjectPath.shown(name))")
        }
    }
}

/// A `host:port` to reach a daemon at: a host name, an IPv4 address, or an IPv6 address in
/// brackets (`[fe80::1%eth0]:7070`).
///
/// Guarantees: at most `JoinLine.maximumAddressBytes` bytes; the port is 1–65535; the host is
/// non-empty and made of letters, digits and `.-_` (or, in brackets, hex digits, `:`, `.` and a
/// `%` zone of letters and digits).
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    /// `text` as `host:port`, or why not.
    public init(_ text: String) throws(JoinLineError) {
        guard text.utf8.count <= JoinLine.maximumAddressBytes, let colon = text.lastIndex(of: ":") else {
            throw .invalid(part: .addresses, "an address is `host:port`, got \(ProjectPath.shown(text))")
        }
        let hostPart = String(text[..<colon])
        let portPart = text[text.index(after: colon)...]
        guard portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portPart), port > 0 else {
            throw .invalid(part: .addresses, "an address's port is 1 to 65535, got \(ProjectPath.shown(text))")
        }
        try self.init(host: hostPart, port: port)
    }

    /// `host` (an IPv6 address in brackets) and `port`.
    public init(host: String, port: UInt16) throws(JoinLineError) {
        let bytes = Array(host.utf8)
        let valid: Bool
        if bytes.first == UInt8(ascii: "[") {
            let inner = bytes.dropFirst().dropLast()
            let zone = inner.firstIndex(of: UInt8(ascii: "%"))
            let address = zone.map { inner[..<$0] } ?? inner
            let zoneName = zone.map { inner[inner.index(after: $0)...] } ?? []
            valid = bytes.last == UInt8(ascii: "]") && address.contains(UInt8(ascii: ":"))
                && address.allSatisfy { Hex.value($0) != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
                && (zone == nil || (!zoneName.isEmpty && zoneName.allSatisfy(Self.isAlphanumeric)))
        } else {
            valid = !bytes.isEmpty && bytes.allSatisfy { Self.isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
        }
        guard valid, bytes.count + 6 <= JoinLine.maximumAddressBytes, port > 0 else {
            throw .invalid(part: .addresses, "an address's host is a name, an IPv4 address or an IPv6 address in brackets, got \(ProjectPath.shown(host))")
        }
        self.host = host
        self.port = port
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    public var description: String { "\(host):\(port)" }
}

/// Lowercase hexadecimal.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The bytes of an even number of hex digits (others are skipped by the caller).
    static func decode(_ digits: [UInt8]) -> [UInt8] {
        stride(from: 0, to: digits.count - 1, by: 2).map { (value(digits[$0]) ?? 0) << 4 | (value(digits[$0 + 1]) ?? 0) }
    }
}
