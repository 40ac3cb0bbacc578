import Crypto

/// The join line's text form (`protocol/decisions/join-line.md`):
///
///     qj1-<base32 of: header, fields, end>
///
/// - header: the length of everything after it (2 bytes, big-endian) and 2 check bytes;
/// - each field: tag (1 byte), length (1 byte), value, 2 check bytes over tag, length and value;
/// - end: tag 0, length 4, then 4 check bytes over the prefix, the header and the fields.
///
/// Tags: 1 name, 2 address (repeated), 3 secret, 4 fingerprint, 5 project key (an invitation's
/// line, issue 22), 6 single file (empty: the project is one file shared by itself, named as the
/// project), 0x81 relay, 0x82 rendezvous.
/// A tag below 0x80 that a reader does not know is refused (the line needs a newer Quire); one
/// from 0x80 up is skipped, so later versions can add optional parts without a new format.
extension JoinLine {
    enum Tag: UInt8 {
        case end = 0
        case name = 1
        case address = 2
        case secret = 3
        case fingerprint = 4
        case projectKey = 5
        case singleFile = 6
        case relay = 0x81
        case rendezvous = 0x82

        var part: JoinLineError.Part {
            switch self {
            case .end: return .check
            case .name: return .name
            case .address: return .addresses
            case .secret: return .secret
            case .fingerprint: return .fingerprint
            case .projectKey: return .projectKey
            case .singleFile: return .singleFile
            case .relay: return .relay
            case .rendezvous: return .rendezvous
            }
        }
    }

    static var textPrefix: String { "\(prefix)\(version)-" }

    /// The line as `quire share` prints it (after `quire join `).
    public var encoded: String {
        var fields: [UInt8] = []
        func append(_ tag: Tag, _ value: [UInt8]) {
            let header = [tag.rawValue, UInt8(value.count)]
            fields += header + value + Self.fieldCheck(header + value)
        }
        append(.name, Array(name.utf8))
        for address in addresses { append(.address, Array(address.description.utf8)) }
        append(.secret, secret)
        append(.fingerprint, fingerprint)
        if let projectKey { append(.projectKey, projectKey) }
        if singleFile { append(.singleFile, []) }
        if let relay { append(.relay, Array(relay.description.utf8)) }
        if let rendezvous { append(.rendezvous, rendezvous) }
        let length = fields.count + 6
        let header = [UInt8(length >> 8), UInt8(length & 0xFF)]
        var body = header + Self.fieldCheck(header) + fields
        body += [Tag.end.rawValue, 4] + Self.finalCheck(body)
        return Self.textPrefix + Base32.encode(body)
    }

    static func fieldCheck(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("quire join field".utf8) + bytes).prefix(2))
    }

    static func finalCheck(_ body: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("quire join line \(textPrefix)".utf8) + body).prefix(4))
    }

    /// The join line in `text` (spaces and line breaks anywhere are ignored, case does not
    /// matter, and a leading `quire join` is allowed), or the specific reason it is refused.
    /// - Complexity: O(n) in the text's length; nothing is allocated before the length is checked.
    public init(parsing text: String) throws(JoinLineError) {
        guard text.utf8.count <= 4 * Self.maximumCharacters else { throw .tooLong(characters: text.utf8.count) }
        var compact = Array(text.utf8.filter { !($0 == 32 || (9...13).contains($0)) }).map { (65...90).contains($0) ? $0 + 32 : $0 }
        if compact.starts(with: Array("quirejoin".utf8)) { compact.removeFirst(9) }
        guard !compact.isEmpty else { throw .empty }
        guard compact.count <= Self.maximumCharacters else { throw .tooLong(characters: compact.count) }
        let bodyStart = try Self.checkPrefix(compact)
        let characters = Array(compact[bodyStart...])
        for (offset, character) in characters.enumerated() where Base32.value(character) == nil {
            let shown = String(decoding: [character], as: UTF8.self)
            throw .badCharacter(character < 128 ? shown.debugDescription : "a non-ASCII character", position: bodyStart + offset + 1)
        }
        let reader = FieldReader(characters: characters, offset: bodyStart)
        self = try reader.read()
    }

    /// The index where the base32 body starts, or why the prefix is wrong.
    private static func checkPrefix(_ line: [UInt8]) throws(JoinLineError) -> Int {
        let prefixBytes = Array(prefix.utf8)
        guard line.starts(with: prefixBytes) else {
            let text = String(decoding: line.prefix(40), as: UTF8.self)
            if text.hasPrefix("quire-") { throw .notAJoinLine(hint: "it looks like a secret from `quire secret`; `quire join` takes the line `quire share` printed") }
            if text.contains(":") { throw .notAJoinLine(hint: "it looks like an address; `quire join` takes the line `quire share` printed") }
            throw .notAJoinLine(hint: "")
        }
        var index = prefixBytes.count
        var version = 0
        while index < line.count, (48...57).contains(line[index]), index - prefixBytes.count < 6 {
            version = version * 10 + Int(line[index] - 48)
            index += 1
        }
        guard index > prefixBytes.count, index < line.count, line[index] == UInt8(ascii: "-") else {
            throw .notAJoinLine(hint: "its version number is missing or unreadable")
        }
        guard version == Self.version else { throw .unsupportedVersion(version) }
        return index + 1
    }
}

/// Reads the fields of a join line's body, naming the part and characters of any damage.
private struct FieldReader {
    let characters: [UInt8]
    /// The 0-based position of the body's first character in the line.
    let offset: Int
    let bytes: [UInt8]
    /// Bits left over after the last whole byte, and whether they are all zero.
    let leftoverIsZero: Bool

    init(characters: [UInt8], offset: Int) {
        self.characters = characters
        self.offset = offset
        (bytes, leftoverIsZero) = Base32.decodeLeniently(characters)
    }

    /// The 1-based characters of the line holding the bytes `range` of the body.
    func characterRange(_ range: Range<Int>) -> ClosedRange<Int> {
        let first = range.lowerBound * 8 / 5
        let last = max(first, (range.upperBound * 8 + 4) / 5 - 1)
        return (offset + first + 1)...(offset + min(last, max(characters.count - 1, 0)) + 1)
    }

    func read() throws(JoinLineError) -> JoinLine {
        // Header: total length and its check.
        let expectedCharacters: Int
        let end: Int
        do {
            guard bytes.count >= 4 else {
                throw JoinLineError.truncated(characters: characters.count, expected: max(characters.count + 1, 7))
            }
            guard Array(bytes[2..<4]) == JoinLine.fieldCheck(Array(bytes[0..<2])) else {
                throw JoinLineError.damaged(part: .header, characters: characterRange(0..<4))
            }
            let length = Int(bytes[0]) << 8 | Int(bytes[1])
            end = 4 + length
            expectedCharacters = (end * 8 + 4) / 5
        }
        guard characters.count >= expectedCharacters else { throw .truncated(characters: characters.count, expected: expectedCharacters) }
        guard characters.count == expectedCharacters else { throw .extraCharacters(characters: characters.count, expected: expectedCharacters) }
        guard end >= 4 + 6 else { throw .damaged(part: .header, characters: characterRange(0..<4)) }

        var name: String?, secret: [UInt8]?, fingerprint: [UInt8]?, projectKey: [UInt8]?, relay: PeerAddress?, rendezvous: [UInt8]?
        var addresses: [PeerAddress] = []
        var singleFile = false
        var position = 4
        let fieldsEnd = end - 6
        while position < fieldsEnd {
            let start = position
            let tagByte = bytes[position]
            let length = Int(bytes[position + 1 < end ? position + 1 : position])
            let tag = JoinLine.Tag(rawValue: tagByte)
            let part = tag?.part ?? .unknown
            let valueEnd = position + 2 + length
            guard position + 2 <= fieldsEnd, valueEnd + 2 <= fieldsEnd, tag != .end else {
                throw .damaged(part: part, characters: characterRange(start..<min(fieldsEnd, valueEnd + 2)))
            }
            let covered = Array(bytes[start..<valueEnd])
            guard Array(bytes[valueEnd..<(valueEnd + 2)]) == JoinLine.fieldCheck(covered) else {
                throw .damaged(part: part, characters: characterRange(start..<(valueEnd + 2)))
            }
            let value = Array(bytes[(start + 2)..<valueEnd])
            position = valueEnd + 2
            switch tag {
            case .name?:
                guard name == nil else { throw .duplicate(.name) }
                guard let text = String(validating: value, as: UTF8.self) else { throw .invalid(part: .name, "it is not UTF-8") }
                name = text
            case .address?:
                guard addresses.count < JoinLine.maximumAddresses else { throw .invalid(part: .addresses, "more than \(JoinLine.maximumAddresses) addresses") }
                addresses.append(try PeerAddress(String(decoding: value, as: UTF8.self)))
            case .secret?:
                guard secret == nil else { throw .duplicate(.secret) }
                secret = value
            case .fingerprint?:
                guard fingerprint == nil else { throw .duplicate(.fingerprint) }
                fingerprint = value
            case .projectKey?:
                guard projectKey == nil else { throw .duplicate(.projectKey) }
                projectKey = value
            case .singleFile?:
                guard !singleFile else { throw .duplicate(.singleFile) }
                guard value.isEmpty else { throw .invalid(part: .singleFile, "the mark of a file shared by itself has no value") }
                singleFile = true
            case .relay?:
                guard relay == nil else { throw .duplicate(.relay) }
                do {
                    relay = try PeerAddress(String(decoding: value, as: UTF8.self))
                } catch {
                    throw .invalid(part: .relay, error.description)
                }
            case .rendezvous?:
                guard rendezvous == nil else { throw .duplicate(.rendezvous) }
                rendezvous = value
            case .end?:
                break
            case nil:
                if tagByte < 0x80 { throw .unknownRequiredPart(tag: tagByte) }
            }
        }
        guard position == fieldsEnd, bytes[fieldsEnd] == JoinLine.Tag.end.rawValue, bytes[fieldsEnd + 1] == 4,
              Array(bytes[(fieldsEnd + 2)..<end]) == JoinLine.finalCheck(Array(bytes[0..<fieldsEnd])),
              leftoverIsZero, bytes.count == end else {
            throw .damaged(part: .check, characters: characterRange(fieldsEnd..<end))
        }
        guard let name else { throw .missing(.name) }
        guard let secret else { throw .missing(.secret) }
        guard let fingerprint else { throw .missing(.fingerprint) }
        guard !addresses.isEmpty || relay != nil else { throw .missing(.addresses) }
        return try JoinLine(name: name, addresses: addresses, secret: secret, fingerprint: fingerprint, relay: relay, rendezvous: rendezvous,
                            projectKey: projectKey, singleFile: singleFile)
    }
}

/// RFC 4648 base32, lowercase, without padding: the join line's body and peer secrets.
public enum Base32 {
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt64 = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt64(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt64(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of a lowercase base32 character.
    static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): return character - UInt8(ascii: "2") + 26
        default: return nil
        }
    }

    /// The bytes of `text`; nil when it has a character outside the (lowercase) alphabet or
    /// leftover bits that are not zero.
    public static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.allSatisfy({ value($0) != nil }) else { return nil }
        let (bytes, leftoverIsZero) = decodeLeniently(characters)
        return leftoverIsZero ? bytes : nil
    }

    /// Every whole byte in `characters` (all in the alphabet), and whether the bits left over
    /// after the last whole byte are zero (as the encoder leaves them).
    static func decodeLeniently(_ characters: [UInt8]) -> ([UInt8], Bool) {
        var out: [UInt8] = []
        out.reserveCapacity(characters.count * 5 / 8)
        var buffer: UInt64 = 0, bits = 0
        for character in characters {
            buffer = (buffer << 5 | UInt64(value(character) ?? 0)) & 0xFFFF
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt64(bits)))
            }
        }
        return (out, buffer & ((1 << UInt64(bits)) - 1) == 0)
    }
}
