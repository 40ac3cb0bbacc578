import QuireProject

/// An invitation to a project (protocol/decisions/roles.md): a secret of the project's scope that
/// this owner daemon holds besides the member secret. A link made with it by a key the roster
/// does not name is admitted with `role`: the daemon signs the roster change, then hands the new
/// member the member secret. `once`: used up by the first key it admits (its secret dropped);
/// `expires`: seconds since 1970 after which it admits no one (refused with a reason, dropped).
/// `standing`: the one `project/share` prints (write, many uses, no expiry, the same line each
/// time the folder is shared).
///
/// Guarantees: the secret is fresh (`PeerSecret.generate`, 240 bits) and at least
/// `PeerSecret.minimumMaterialBytes`; `tag` is `PeerSecret.tag(of: secret)`.
struct ProjectInvitation: Equatable {
    /// Invitations one project keeps at once (the daemon's secrets are bounded too:
    /// `PeerSecrets.maximumInvitationSecrets`).
    static let maximumPerProject = 32
    /// Keys a line of many uses admits at most (the standing line included): one holder cannot
    /// sign in spare keys without bound (they would outlive a revocation of its first key and
    /// fill the roster's 1,024 keys for good). Then the line is used up: `quire share` again
    /// prints a fresh one.
    static let maximumUses = 16

    let secret: [UInt8]
    let tag: String
    let role: ProjectRole
    let once: Bool
    let expires: Int?
    let standing: Bool
    /// Keys it admitted so far.
    var uses = 0

    /// Whether admitting one more key uses it up (`once`, or `limit` keys reached with it).
    func isUsedUpByNextAdmission(limit: Int = maximumUses) -> Bool { once || uses + 1 >= limit }

    init(secret: [UInt8], role: ProjectRole, once: Bool, expires: Int?, standing: Bool) {
        self.secret = secret
        tag = PeerSecret.tag(of: secret)
        self.role = role
        self.once = once
        self.expires = expires
        self.standing = standing
    }

    /// A new invitation with a fresh secret.
    static func make(role: ProjectRole, once: Bool, expires: Int?, standing: Bool) throws -> ProjectInvitation {
        let secret = try PeerSecret.material(from: PeerSecret.generate())
        return ProjectInvitation(secret: secret, role: role, once: once, expires: expires, standing: standing)
    }

    /// Whether it admits no one any more at `now` (seconds since 1970).
    func hasExpired(now: Double) -> Bool {
        guard let expires else { return false }
        return now >= Double(expires)
    }

    /// Its form in `project.json` (the secret in hex: the record is mode 0600).
    struct Record: Codable, Equatable {
        var secret: String
        var role: String
        var once: Bool
        var expires: Int?
        var standing: Bool?
        var uses: Int?
    }

    var record: Record {
        Record(secret: Hex.encode(secret), role: role.rawValue, once: once, expires: expires, standing: standing, uses: uses)
    }

    /// The invitation `record` holds, nil when it is not valid (a damaged record is not trusted).
    init?(record: Record) {
        let length = record.secret.utf8.count / 2
        guard JoinLine.secretBytes.contains(length), let secret = Hex.decode(record.secret, count: length),
              let role = ProjectRole(rawValue: record.role) else { return nil }
        self.init(secret: secret, role: role, once: record.once, expires: record.expires, standing: record.standing ?? false)
        uses = min(max(record.uses ?? 0, 0), Self.maximumUses)
    }
}
