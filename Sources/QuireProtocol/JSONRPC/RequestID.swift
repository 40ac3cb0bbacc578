import JSON

/// A JSON-RPC request id, kept exactly as sent (type and value) so the reply echoes it:
/// the string `"1"` and the number `1` are different ids.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
    case number(Int64)
    case string(String)
    /// A fractional number; the spec discourages it, but it is still echoed verbatim.
    case fractional(Double)
    case null

    /// The id held by a JSON value, or nil when the value cannot be an id (object, array, bool).
    public init?(_ value: JSONValue) {
        switch value {
        case .integer(let i): self = .number(i)
        case .string(let s): self = .string(s)
        case .double(let d): self = .fractional(d)
        case .null: self = .null
        default: return nil
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let i): return .integer(i)
        case .string(let s): return .string(s)
        case .fractional(let d): return .double(d)
        case .null: return .null
        }
    }

    public var description: String {
        switch self {
        case .number(let i): return String(i)
        case .string(let s): return s.debugDescription
        case .fractional(let d): return String(d)
        case .null: return "null"
        }
    }
}
