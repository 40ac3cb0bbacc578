/// Why a join line is refused: each case names what is wrong and where, so the person who
/// pasted it knows whether to copy it again, update Quire or ask for a new line.
public enum JoinLineError: Error, Equatable, CustomStringConvertible {
    /// The parts of a join line, as errors name them.
    public enum Part: String, Sendable, Equatable {
        case header = "length header"
        case name = "project name"
        case addresses = "addresses"
        case secret = "secret"
        case fingerprint = "key fingerprint"
        case projectKey = "project key"
        case singleFile = "single-file mark"
        case relay = "relay address"
        case rendezvous = "rendezvous value"
        case unknown = "an unknown part"
        case check = "final check"
    }

    case empty
    case tooLong(characters: Int)
    /// The text does not start like a join line; `hint` says what it looks like instead.
    case notAJoinLine(hint: String)
    case unsupportedVersion(Int)
    /// A character that cannot be in a join line, 1-based position in the line (spaces removed).
    case badCharacter(String, position: Int)
    /// The line ends early: it has `characters` of its `expected`.
    case truncated(characters: Int, expected: Int)
    /// The line is longer than its header says (characters added, or pasted twice).
    case extraCharacters(characters: Int, expected: Int)
    /// The characters `characters` (1-based, in the line with spaces removed) fail their check.
    case damaged(part: Part, characters: ClosedRange<Int>)
    case missing(Part)
    case duplicate(Part)
    /// A part this version does not know and may not skip: the line needs a newer Quire.
    case unknownRequiredPart(tag: UInt8)
    /// A part that passed its check but breaks a bound (a line made by something else).
    case invalid(part: Part, String)

    private static let copyAgain = "copy the whole line `quire share` printed again"

    public var description: String {
        switch self {
        case .empty: return "the join line is empty; paste the line `quire share` printed"
        case .tooLong(let count): return "this is not a join line: it is \(count) characters long, more than any join line (\(JoinLine.maximumCharacters))"
        case .notAJoinLine(let hint): return "this is not a join line (a join line starts with `\(JoinLine.prefix)\(JoinLine.version)-`)\(hint.isEmpty ? "" : ": " + hint)"
        case .unsupportedVersion(let version):
            return version > JoinLine.version
                ? "this join line was made by a newer Quire (format \(version); this Quire reads format \(JoinLine.version)): update Quire"
                : "this join line has format \(version), which this Quire does not read (it reads format \(JoinLine.version))"
        case .badCharacter(let character, let position):
            return "the join line has a character that cannot be in it, \(character) at position \(position): a typing error? \(Self.copyAgain)"
        case .truncated(let characters, let expected):
            return "the join line is cut short: it has \(characters) of its \(expected) characters; \(Self.copyAgain)"
        case .extraCharacters(let characters, let expected):
            return "the join line has \(characters - expected) characters too many (\(characters), expected \(expected)); \(Self.copyAgain)"
        case .damaged(let part, let range):
            return "the join line is damaged: its \(part.rawValue) (characters \(range.lowerBound)–\(range.upperBound)) does not match its check; \(Self.copyAgain)"
        case .missing(let part): return "the join line has no \(part.rawValue); ask for a new line"
        case .duplicate(let part): return "the join line has its \(part.rawValue) twice; ask for a new line"
        case .unknownRequiredPart(let tag): return "the join line has a part this Quire does not know (\(tag)): update Quire"
        case .invalid(let part, let why): return "the join line's \(part.rawValue) is not valid: \(why)"
        }
    }
}
