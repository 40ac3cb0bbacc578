import JSON

/// A zero-based position as editors send it: `character` counts in the encoding agreed at
/// `initialize` (UTF-8 bytes, UTF-16 code units or code points). Not yet checked against a text.
public struct WirePosition: Hashable, Sendable {
    public var line: Int
    public var character: Int

    public init(line: Int, character: Int) {
        self.line = line
        self.character = character
    }

    init(_ reader: ParamsReader) throws(ResponseError) {
        line = try reader.nonNegativeInt("line")
        character = try reader.nonNegativeInt("character")
    }

    public var json: JSONValue { ["line": .integer(Int64(line)), "character": .integer(Int64(character))] }
}

/// A `start`..`end` span; for a selection `start` is the anchor and `end` the cursor, so `end`
/// may come first.
public struct WireRange: Hashable, Sendable {
    public var start: WirePosition
    public var end: WirePosition

    public init(start: WirePosition, end: WirePosition) {
        self.start = start
        self.end = end
    }

    init(_ reader: ParamsReader) throws(ResponseError) {
        start = try WirePosition(reader.object("start"))
        end = try WirePosition(reader.object("end"))
    }

    public var json: JSONValue { ["start": start.json, "end": end.json] }
}

/// One change to a document's text. Changes in a list apply in order, each to the text the
/// previous one left (as LSP `didChange` content changes).
public enum WireChange: Hashable, Sendable {
    /// Replace `range` with `text`.
    case range(WireRange, text: String)
    /// Replace whole lines `lines` (end exclusive) with `newLines`, one string per line, no breaks.
    case lines(Range<Int>, newLines: [String])
    /// Replace the whole text.
    case full(String)

    init(_ reader: ParamsReader) throws(ResponseError) {
        if let range = try reader.optionalObject("range") {
            self = .range(try WireRange(range), text: try reader.string("text"))
        } else if let lines = try reader.optionalObject("lines") {
            let start = try lines.nonNegativeInt("start"), end = try lines.nonNegativeInt("end")
            guard start <= end else { throw .invalidParams("\(lines.path): start \(start) is after end \(end)") }
            guard let newLines = try reader.strings("newLines") else { throw .invalidParams("\(reader.path).newLines: missing") }
            if let bad = newLines.firstIndex(where: { $0.contains("\n") }) {
                throw .invalidParams("\(reader.path).newLines[\(bad)]: a line must not contain \"\\n\"")
            }
            self = .lines(start..<end, newLines: newLines)
        } else {
            self = .full(try reader.string("text"))
        }
    }

    public var json: JSONValue {
        switch self {
        case .range(let range, let text): return ["range": range.json, "text": .string(text)]
        case .lines(let lines, let newLines):
            return ["lines": ["start": .integer(Int64(lines.lowerBound)), "end": .integer(Int64(lines.upperBound))],
                    "newLines": .array(newLines.map { .string($0) })]
        case .full(let text): return ["text": .string(text)]
        }
    }
}

/// Who is editing: shown next to their cursor in other editors.
public struct WireUser: Hashable, Sendable {
    public var name: String
    public var color: String?

    public init(name: String, color: String? = nil) {
        self.name = name
        self.color = color
    }

    init(_ reader: ParamsReader) throws(ResponseError) {
        name = try reader.string("name")
        color = try reader.optionalString("color")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["name": .string(name)]
        if let color { members["color"] = .string(color) }
        return .object(members)
    }
}
