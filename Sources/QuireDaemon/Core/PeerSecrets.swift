/// The secrets this daemon peers with, each with the scope its links carry
/// (protocol/decisions/project-sharing.md): the general one (`QUIRE_SECRET`, `--secret-file`;
/// may be absent) and one per shared or joined project, added and removed at run time.
///
/// Guarantees: at most `maximumProjectSecrets` project secrets; a project secret has at least
/// `PeerSecret.minimumMaterialBytes` bytes and is held under the key it derives
/// (`DocumentScope.projectKey(secret:)`), so a link's scope always names the secret it proved.
/// The general secret is kept as configured (a short one is refused when a link is made with it,
/// as before).
///
/// Invitations (protocol/decisions/roles.md): an owner daemon also holds its invitations'
/// secrets as extra secrets of their project's scope (at most `maximumInvitationSecrets` in all),
/// which only an accepting side speaks with; a joiner redeeming one holds it as its project's
/// secret until the member secret arrives (`add(_:scope:derivedKey:)` with `derivedKey` false).
struct PeerSecrets {
    /// Project secrets a daemon may hold at once (each costs a key derivation per incoming handshake).
    static let maximumProjectSecrets = 64
    /// Invitation secrets a daemon may hold at once, over all its projects.
    static let maximumInvitationSecrets = 64

    private(set) var general: [UInt8]?
    private var projects: [String: [UInt8]] = [:]
    /// Invitation secrets by project key, in the order they were added.
    private var invitations: [String: [[UInt8]]] = [:]

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
        for key in invitations.keys.sorted() where projects[key] != nil {
            for secret in invitations[key] ?? [] { all.append((.project(key: key), secret)) }
        }
        return all
    }

    /// How many invitation secrets are held, over all projects.
    var invitationCount: Int { invitations.values.reduce(0) { $0 + $1.count } }

    /// Holds `secret` as an invitation to project `key` (spoken with only by an accepting side);
    /// throws when it is too short or `maximumInvitationSecrets` are held; nothing changes then.
    mutating func addInvitation(_ secret: [UInt8], projectKey key: String) throws(PeeringError) {
        guard secret.count >= PeerSecret.minimumMaterialBytes else { throw .weakSecret }
        guard !(invitations[key]?.contains(secret) ?? false) else { return }
        guard invitationCount < Self.maximumInvitationSecrets else { throw .tooManySecrets(Self.maximumInvitationSecrets) }
        invitations[key, default: []].append(secret)
    }

    /// Forgets the invitation `secret` of project `key`; whether it was held.
    @discardableResult
    mutating func removeInvitation(_ secret: [UInt8], projectKey key: String) -> Bool {
        guard let index = invitations[key]?.firstIndex(of: secret) else { return false }
        invitations[key]?.remove(at: index)
        if invitations[key]?.isEmpty == true { invitations[key] = nil }
        return true
    }

    /// The scopes of the project secrets held, by key.
    var projectScopes: [DocumentScope] { projects.keys.sorted().map { .project(key: $0) } }

    /// Holds `secret` for `scope` (replacing the general one, or adding a project's). Throws
    /// when it is too short, is not the secret of that project's key, or a 65th project secret
    /// would be held; nothing changes then.
    /// `derivedKey` false: a project secret that is an invitation's, which the joiner redeeming it
    /// speaks with before it holds the member secret (its key is not derived from it).
    mutating func add(_ secret: [UInt8], scope: DocumentScope, derivedKey: Bool = true) throws(PeeringError) {
        guard secret.count >= PeerSecret.minimumMaterialBytes else { throw .weakSecret }
        switch scope {
        case .general:
            general = secret
        case .project(let key):
            guard !derivedKey || DocumentScope.projectKey(secret: secret) == key else { throw .secretNotOfScope(scope) }
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
            invitations[key] = nil
            return projects.removeValue(forKey: key) != nil
        }
    }
}
