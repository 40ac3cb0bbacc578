/// The unit in which a `TextPosition`'s `character` counts: UTF-8 bytes, UTF-16 code units, or
/// Unicode scalars (UTF-32), as negotiated with an editor (LSP `positionEncodings`).
public enum PositionEncoding: String, Hashable, Sendable, Codable, CaseIterable {
    case utf8 = "utf-8"
    case utf16 = "utf-16"
    case utf32 = "utf-32"

    /// How many units of this encoding `scalar` takes.
    @inline(__always)
    public func width(of scalar: Unicode.Scalar) -> Int {
        switch self {
        case .utf8: return UTF8.width(scalar)
        case .utf16: return UTF16.width(scalar)
        case .utf32: return 1
        }
    }

    public func width<S: Sequence>(of scalars: S) -> Int where S.Element == Unicode.Scalar {
        scalars.reduce(0) { $0 + width(of: $1) }
    }
}

/// A zero-based (line, character) position; `character` counts in a `PositionEncoding`.
/// Lines are separated by `\n` only; `\r` is an ordinary character.
public struct TextPosition: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var line: Int
    public var character: Int

    public init(line: Int, character: Int) {
        self.line = line
        self.character = character
    }

    public static func < (lhs: TextPosition, rhs: TextPosition) -> Bool {
        lhs.line != rhs.line ? lhs.line < rhs.line : lhs.character < rhs.character
    }

    public var description: String { "\(line):\(character)" }
}

/// A range between two positions, `start` not after `end`.
public struct TextRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public var start: TextPosition
    public var end: TextPosition

    public init(start: TextPosition, end: TextPosition) {
        self.start = start
        self.end = end
    }

    public var description: String { "\(start)-\(end)" }
}

/// Why a position does not name a place in the text; says which bound it broke.
public enum TextPositionError: Error, Hashable, Sendable, CustomStringConvertible {
    case negative(TextPosition)
    case lineOutOfRange(line: Int, lineCount: Int)
    case characterOutOfRange(TextPosition, lineLength: Int, encoding: PositionEncoding)
    case insideCharacter(TextPosition, encoding: PositionEncoding)
    case reversedRange(TextRange)

    public var description: String {
        switch self {
        case .negative(let p): return "position \(p) is negative"
        case .lineOutOfRange(let line, let count): return "line \(line) is past the end: the text has \(count) lines (0...\(count - 1))"
        case .characterOutOfRange(let p, let length, let encoding):
            return "character \(p.character) is past the end of line \(p.line), which is \(length) \(encoding.rawValue) units long"
        case .insideCharacter(let p, let encoding):
            return "position \(p) falls inside a character's \(encoding.rawValue) encoding"
        case .reversedRange(let r): return "range \(r) ends before it starts"
        }
    }
}

/// A visible change to a text, as an editor applies it: replace `range` (positions in the text
/// just before this change) with `text`. `lines` are the paragraphs the change touched.
public struct TextChange: Hashable, Sendable {
    public var range: TextRange
    public var text: String
    public var lines: ClosedRange<Int> { range.start.line...range.end.line }

    public init(range: TextRange, text: String) {
        self.range = range
        self.text = text
    }
}
