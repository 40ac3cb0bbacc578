/// What a daemon's Unix socket takes: editors (`--socket`, `editors.sock`) or peer links
/// (`peer.sock`, reached by `quire peer --stdio` over ssh). Both are bound, guarded and cleaned
/// up by the same code (`EditorSocket`, `EditorSocketServer`, `EditorCredentials`); the kind
/// only names the socket in errors and logs.
enum LocalSocketKind: Sendable {
    case editor
    case peer

    /// "editor" or "peer", as in "refused an editor connection".
    var noun: String {
        switch self {
        case .editor: return "editor"
        case .peer: return "peer"
        }
    }

    /// "editors" or "peers", as in "cannot listen for editors on PATH".
    var plural: String { noun + "s" }

    /// The article that goes before `noun`.
    var article: String {
        switch self {
        case .editor: return "an"
        case .peer: return "a"
        }
    }
}
