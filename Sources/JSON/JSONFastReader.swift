/// A one-pass reader for the JSON that editors and daemons send (objects, arrays, strings,
/// integers, `true`, `false`, `null`), which `JSONParser` tries before jansson: jansson reads a
/// large string byte by byte through its own buffer, and the result is then copied and checked
/// again as a Swift `String`; this reader copies each string once.
///
/// Guarantees: it never accepts a document jansson (with `JSONParser`'s flags) rejects, and what
/// it accepts it reads to the value jansson gives. Anything else, valid or not, it gives up on
/// (nil), and `JSONParser` asks jansson, whose result and error messages stay the only ones:
/// numbers with a fraction or exponent, integers outside Int64, leading zeros, any raw byte below
/// 0x20 but blank space (raw NUL included), invalid UTF-8, escapes of lone surrogates, `\u0000`
/// in a key (jansson refuses it), nesting `maximumDepth` deep or more, trailing bytes.
struct JSONFastReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private var position = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []

    /// jansson's own nesting limit is 2048; giving up well before it keeps the two in agreement.
    static let depthLimit = 1024

    init(_ bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = min(maximumDepth, Self.depthLimit)
    }

    /// The whole buffer as one JSON value, or nil when this reader leaves it to jansson.
    mutating func read() -> JSONValue? {
        skipBlanks()
        guard let value = value(depth: 0) else { return nil }
        skipBlanks()
        return position == bytes.count ? value : nil
    }

    private mutating func skipBlanks() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return string(isKey: false).map { .string($0) }
        case UInt8(ascii: "{"):
            return object(depth: depth)
        case UInt8(ascii: "["):
            return array(depth: depth)
        case UInt8(ascii: "t"):
            return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return literal("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return integer()
        default:
            return nil
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let base = word.utf8Start
        for k in 0..<count where bytes[position + k] != base[k] { return false }
        position += count
        // "truex" is one bad word to jansson, not `true` and then something else.
        if position < bytes.count, Self.isLetter(bytes[position]) { return false }
        return true
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// `-?(0|[1-9][0-9]*)` fitting Int64; a fraction, an exponent or an overflow is jansson's.
    private mutating func integer() -> JSONValue? {
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let start = position
        var value: Int64 = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = next
            position += 1
        }
        let digits = position - start
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        return .integer(value)
    }

    private mutating func array(depth: Int) -> JSONValue? {
        guard depth < maximumDepth else { return nil }
        position += 1
        var items: [JSONValue] = []
        skipBlanks()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            skipBlanks()
            guard let item = value(depth: depth + 1) else { return nil }
            items.append(item)
            skipBlanks()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(items)
            default: return nil
            }
        }
    }

    private mutating func object(depth: Int) -> JSONValue? {
        guard depth < maximumDepth else { return nil }
        position += 1
        var members: [String: JSONValue] = [:]
        skipBlanks()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipBlanks()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string(isKey: true) else { return nil }
            skipBlanks()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
            position += 1
            skipBlanks()
            guard let member = value(depth: depth + 1) else { return nil }
            members[key] = member   // the last of duplicate keys wins, as in jansson
            skipBlanks()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: return nil
            }
        }
    }

    /// The string starting at the quote under `position`, unescaped and checked as UTF-8.
    private mutating func string(isKey: Bool) -> String? {
        position += 1
        var runStart = position
        var escaped = false
        scratch.removeAll(keepingCapacity: true)
        while position < bytes.count {
            skipPlainWords()
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                position += 1
                guard escaped else { return String(validating: run, as: UTF8.self) }
                scratch.append(contentsOf: run)
                return scratch.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
            }
            if byte == UInt8(ascii: "\\") {
                if !escaped {
                    escaped = true
                    scratch.reserveCapacity(Self.scratchCapacity(for: bytes.count - runStart))
                }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                guard unescape(isKey: isKey) else { return nil }
                runStart = position
                continue
            }
            if byte < 0x20 { return nil }   // a raw control character (jansson refuses it)
            position += 1
        }
        return nil
    }

    /// Moves past whole 8-byte words of a string holding no quote, backslash or byte below 0x20
    /// (bytes from 0x80 are checked as UTF-8 later); the byte loop does the rest.
    private mutating func skipPlainWords() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while bytes.count - position >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            let quotes = word ^ (ones &* 0x22), backslashes = word ^ (ones &* 0x5C)
            // Whether some byte is zero (a quote or backslash), or below 0x20: exact for "some".
            let special = ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((word &- ones &* 0x20) & ~word)
            if special & highs != 0 { return }
            position += 8
        }
    }

    /// What a string with escapes may need: at most the rest of the input (an escape never
    /// grows), kept modest so a short string in a large message reserves little more than once.
    private static func scratchCapacity(for rest: Int) -> Int { min(rest, 1 << 16) }

    /// Appends the escape at `position` (a backslash) to `scratch` and moves past it.
    private mutating func unescape(isKey: Bool) -> Bool {
        guard position + 1 < bytes.count else { return false }
        let code = bytes[position + 1]
        position += 2
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(code)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            guard let unit = hex4() else { return false }
            var scalar = unit
            if (0xD800...0xDBFF).contains(unit) {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else { return false }
                position += 2
                guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                return false
            }
            if scalar == 0 && isKey { return false }
            guard let value = Unicode.Scalar(scalar), let encoded = UTF8.encode(value) else { return false }
            scratch.append(contentsOf: encoded)
        default:
            return false
        }
        return true
    }

    /// Four hex digits at `position` (either case), moved past.
    private mutating func hex4() -> UInt32? {
        guard bytes.count - position >= 4 else { return nil }
        var value: UInt32 = 0
        for k in 0..<4 {
            let byte = bytes[position + k]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }
}
