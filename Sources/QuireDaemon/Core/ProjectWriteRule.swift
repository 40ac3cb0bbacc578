import QuireProject
import QuireProtocol

/// Why this daemon's editors may not change a project's documents: the project and this
/// daemon's role in it (protocol/decisions/roles.md, *Enforcement*).
struct ReadOnlyReason: Equatable {
    /// The project's key (16 hex digits) and the name it is shown by (cleaned).
    let key: String
    let name: String
    /// This daemon's role there, which does not allow writing.
    let role: ProjectRole

    /// What a client may show: "you can read notes but not change it (role read)".
    var sentence: String { ResponseError.readOnlyReason(project: name, role: role.rawValue) }

    /// The error an edit of document `uri` gets (-32019); nothing changed.
    func error(uri: String) -> ResponseError {
        .readOnly(uri: uri, key: key, name: name, role: role.rawValue)
    }
}

/// Who may change a project's documents and tree (protocol/decisions/roles.md, *Enforcement*):
/// the one place the roster's roles (`ProjectAccess`) become "may write", for a peer link (its
/// proved identity key) and for this daemon's own editors. Asked by the operation path
/// (`OperationRouter`), the editor sessions and the peer sessions.
///
/// Guarantees: the general scope has no roster, so everything is allowed there; so is a project
/// this daemon holds no roster for (`ProjectAccess.ownRole` nil: it shares or follows no such
/// project, as a daemon given a project's secret alone). In a project it holds, a peer may write
/// only when its key's role allows it (no key, or a key the roster does not name: no).
final class ProjectWriteRule {
    /// The rosters (the project service; a stand-in in tests).
    weak var access: (any ProjectAccess)?
    /// The name project `key` is shown by, when the daemon knows it (cleaned before it is shown).
    var projectName: (String) -> String? = { _ in nil }

    /// Why this daemon's editors may not change document `uri`; nil when they may.
    /// - Complexity: O(1) plus the roster's lookup.
    func ownReadOnly(_ uri: String) -> ReadOnlyReason? {
        guard let key = DocumentScope.projectKey(inURI: uri), let role = access?.ownRole(inProject: key), !role.mayWrite else {
            return nil
        }
        return ReadOnlyReason(key: key, name: name(of: key), role: role)
    }

    /// Why a peer whose identity key is `peerKey` may not change the documents and tree a link
    /// of `scope` carries (a phrase for the log), or nil when it may.
    func peerRefusal(_ peerKey: [UInt8]?, on scope: DocumentScope?) -> String? {
        guard case .project(let key)? = scope, let access, access.ownRole(inProject: key) != nil else { return nil }
        guard let peerKey else { return "the peer has proved no key" }
        guard let role = access.role(ofPeerKey: peerKey, inProject: key) else {
            return "the peer's key has no role in project \(key)"
        }
        return role.mayWrite ? nil : "the peer's key has role \(role.rawValue) in project \(key)"
    }

    /// The name project `key` is shown by: its own (cleaned), else its key.
    func name(of key: String) -> String {
        let name = projectName(key).map { DisplayText.clean($0) } ?? ""
        return name.isEmpty ? key : name
    }
}
