/// The secrets this daemon peers with, each with the scope its links carry
/// (protocol/decisions/project-sharing.md): the general one (`QUIRE_SECRET`, `--secret-file`;
/// may be absent) and one per shared or joined project, added and removed at run time.
///
/// Guarantees: at most `maximumProjectSecrets` project secrets; a project secret has at least
/// `PeerSecret.minimumMaterialBytes` bytes and is held under the key it derives
/// (`DocumentScope.projectKey(secret:)`), so a link's scope always names the secret it proved.
/// The general secret is kept as configured (a short one is refused when a link is made with it,
/// as before).
struct PeerSecrets {
    /// Project secrets a daemon may hold at once (each costs a key derivation per incoming handshake).
    static let maximumProjectSecrets = 64

    private(set) var general: [UInt8]?
    private var projects: [String: [UInt8]] = [:]

    init(general: [UInt8]?) {
        self.general = general
    }

    /// The secret links of `scope` are made with, if held.
    func secret(for scope: DocumentScope) -> [UInt8]? {
        switch scope {
        case .general: return general.flatMap { $0.isEmpty ? nil : $0 }
        case .project(let key): return projects[key]
        }
    }

    /// Whether a secret of `scope` is held.
    func holds(_ scope: DocumentScope) -> Bool { secret(for: scope) != nil }

    /// Every secret held, with its scope: the general one first, then the projects' by key (the
    /// order an accepting side tries them in).
    var all: [(scope: DocumentScope, secret: [UInt8])] {
        var all: [(scope: DocumentScope, secret: [UInt8])] = []
        if let general = secret(for: .general) { all.append((.general, general)) }
        for key in projects.keys.sorted() { all.append((.project(key: key), projects[key] ?? [])) }
        return all
    }

    /// The scopes of the project secrets held, by key.
    var projectScopes: [DocumentScope] { projects.keys.sorted().map { .project(key: $0) } }

    /// Holds `secret` for `scope` (replacing the general one, or adding a project's). Throws
    /// when it is too short, is not the secret of that project's key, or a 65th project secret
    /// would be held; nothing changes then.
    mutating func add(_ secret: [UInt8], scope: DocumentScope) throws(PeeringError) {
        guard secret.count >= PeerSecret.minimumMaterialBytes else { throw .weakSecret }
        switch scope {
        case .general:
            general = secret
        case .project(let key):
            guard DocumentScope.projectKey(secret: secret) == key else { throw .secretNotOfScope(scope) }
            if projects[key] == nil, projects.count >= Self.maximumProjectSecrets { throw .tooManySecrets(Self.maximumProjectSecrets) }
            projects[key] = secret
        }
    }

    /// Forgets the secret of `scope`; whether one was held.
    @discardableResult
    mutating func remove(scope: DocumentScope) -> Bool {
        switch scope {
        case .general:
            defer { general = nil }
            return general != nil
        case .project(let key):
            return projects.removeValue(forKey: key) != nil
        }
    }
}
