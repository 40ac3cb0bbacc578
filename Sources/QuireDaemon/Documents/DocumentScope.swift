import Crypto
import Foundation

/// Which peer links may carry a document (protocol/decisions/project-sharing.md): the
/// daemon's general secret's links (documents shared by name), or the links of one shared
/// project, made with that project's own secret.
///
/// Guarantees: a document's scope is a function of its name alone (`@<key>/...` is project
/// `key`'s, any other name is general), so no scope is stored per document and two projects
/// never share a name.
public enum DocumentScope: Hashable, Sendable, CustomStringConvertible {
    case general
    case project(key: String)

    /// Digits in a project key (lowercase hex of 8 bytes).
    static let projectKeyDigits = 16

    /// The scope of the document named `uri`.
    init(uri: String) {
        if let key = Self.projectKey(inURI: uri) { self = .project(key: key) } else { self = .general }
    }

    /// Whether the document named `uri` belongs to this scope.
    func contains(uri: String) -> Bool { DocumentScope(uri: uri) == self }

    /// The key of a project's secret: HKDF-SHA256 of the secret, info "quire project key",
    /// 8 bytes, in lowercase hex. Both sides of a join line derive it; it reveals nothing of
    /// the secret.
    public static func projectKey(secret: [UInt8]) -> String {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret),
                                         info: Array("quire project key".utf8), outputByteCount: 8)
        return key.withUnsafeBytes { Hex.encode(Array($0)) }
    }

    /// The name of project `key`'s document for the file whose tree identity is `file`.
    static func projectURI(key: String, file: String) -> String { "@\(key)/\(file)" }

    /// The key in a project document's name, if `uri` is one: `@`, 16 lowercase hex digits, `/`
    /// and at least one more character.
    static func projectKey(inURI uri: String) -> String? {
        let bytes = Array(uri.utf8)
        guard bytes.count > projectKeyDigits + 2, bytes[0] == UInt8(ascii: "@"),
              bytes[projectKeyDigits + 1] == UInt8(ascii: "/") else { return nil }
        let digits = bytes[1...projectKeyDigits]
        guard digits.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        return String(decoding: digits, as: UTF8.self)
    }

    public var description: String {
        switch self {
        case .general: return "general"
        case .project(let key): return "project \(key)"
        }
    }
}
