import QuireProject
import QuireProtocol

// A project's members and roles (protocol/decisions/roles.md): invitations, role changes,
// revocation and the member list, as editors ask for them. Every change is signed by this
// daemon's key, applied, kept, sent to every link of the project, and takes effect at once.
extension ProjectService {
    /// `project/invite`: an invitation (a fresh secret of the project's scope held by this owner
    /// daemon) and the join line carrying it.
    func invite(_ request: ProjectInviteRequest) throws(ResponseError) -> ProjectInviteRequest.Result {
        let project = try ownedProject(request.key, ProjectInviteRequest.method, doing: "invites")
        guard let role = ProjectRole(rawValue: request.role) else { throw .invalidParams("params.role: read, write or owner") }
        let now = now()
        for expired in project.invitations where expired.hasExpired(now: now) { drop(expired, of: project) }
        guard project.invitations.count < ProjectInvitation.maximumPerProject else {
            throw .invalidParams("project/invite: project \(DisplayText.clean(project.name)) has \(ProjectInvitation.maximumPerProject) invitations still good, the most it keeps")
        }
        let expires = request.expiresIn.map { Int(now) + $0 }
        let invitation: ProjectInvitation
        do { invitation = try ProjectInvitation.make(role: role, once: request.once, expires: expires, standing: false) } catch {
            throw .internalError("a new secret does not read back")
        }
        do { try registerInvitation(invitation.secret, project.key) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot hold another invitation: \(error)")
        }
        project.invitations.append(invitation)
        keep(project)
        dialRelay(project, for: invitation)
        logger.info("project \(project.key): an invitation as \(role.rawValue)\(request.once ? ", once" : "")\(expires.map { ", until \($0)" } ?? "")")
        return .init(line: try joinLine(of: project, invitation: invitation), role: role.rawValue, once: request.once, expires: expires)
    }

    /// `project/role`: gives `member` `role` (a removed key is readmitted so).
    func setRole(_ request: ProjectRoleRequest) throws(ResponseError) -> ProjectRoleRequest.Result {
        let project = try ownedProject(request.key, ProjectRoleRequest.method, doing: "changes roles")
        guard let role = ProjectRole(rawValue: request.role) else { throw .invalidParams("params.role: read, write or owner") }
        let subject = try member(request.member, in: project)
        try change(subject, to: role, in: project)
        return entry(subject, in: project)
    }

    /// `project/revoke`: removes `member`; its links are cut at once, here and on every daemon
    /// the change reaches.
    func revoke(_ request: ProjectRevokeRequest) throws(ResponseError) -> ProjectRevokeRequest.Result {
        let project = try ownedProject(request.key, ProjectRevokeRequest.method, doing: "revokes")
        let subject = try member(request.member, in: project)
        guard subject != ownKey else {
            throw .invalidParams("params.member: this daemon cannot revoke itself from project \(DisplayText.clean(project.name)); stop the project instead")
        }
        guard project.roster?.removed.contains(subject) != true else {
            throw .invalidParams("params.member: \(shown(subject, in: project)) was removed from project \(DisplayText.clean(project.name)) already")
        }
        try change(subject, to: nil, in: project)
        return entry(subject, in: project)
    }

    /// `project/members`: the roster as this daemon has it.
    func members(_ request: ProjectMembersRequest) throws(ResponseError) -> ProjectMembersRequest.Result {
        guard let project = projects[request.key] else {
            throw .invalidParams("params.key: this daemon shares or follows no project \(request.key)")
        }
        guard let roster = project.roster else {
            return .init(members: ownKey.map { [entry($0, in: project)] } ?? [])
        }
        let keys = roster.namedKeys.filter { roster.role(of: $0) != nil || roster.removed.contains($0) }
        let rank: (MemberKey) -> Int = { key in [ProjectRole.owner, .write, .read].firstIndex { roster.role(of: key) == $0 } ?? 3 }
        let sorted = keys.sorted { a, b in
            if rank(a) != rank(b) { return rank(a) < rank(b) }
            let (nameA, nameB) = (name(of: a, in: project) ?? "\u{10FFFF}", name(of: b, in: project) ?? "\u{10FFFF}")
            return nameA != nameB ? nameA < nameB : a < b
        }
        return .init(members: sorted.map { entry($0, in: project) })
    }

    // MARK: Helpers

    /// The active project `key`, which this daemon owns; otherwise an error saying so.
    private func ownedProject(_ key: String, _ method: String, doing what: String) throws(ResponseError) -> SharedProject {
        guard let project = projects[key], project.active else {
            throw .invalidParams("params.key: this daemon shares or follows no project \(key)")
        }
        let own = ownRole(inProject: key)
        guard own == .owner else {
            let name = DisplayText.clean(project.name)
            throw .invalidParams("\(method): only an owner of project \(name) \(what); this daemon is \(own.map { "a \($0 == .write ? "writer" : "reader")" } ?? "no member") of it")
        }
        return project
    }

    /// Signs, applies, keeps and sends a change of `subject`'s role; its effects follow.
    private func change(_ subject: MemberKey, to role: ProjectRole?, in project: SharedProject) throws(ResponseError) {
        guard var roster = project.roster else { throw .internalError("project \(project.key) has no roster") }
        let before = roster.roles
        let change: RosterChange
        do { change = try roster.change(subject, to: role, signer: parts.identity.identity.privateKey) } catch {
            throw .invalidParams("params.member: \(shown(subject, in: project)): \(error)")
        }
        project.roster = roster
        keep(project)
        logger.info("project \(project.key): \(subject) is now \(role?.rawValue ?? "removed")")
        sendChanges([change], of: project, to: links(of: project))
        rosterChanged(project, previousRoles: before)
    }

    /// The one key of `project`'s roster that `text` names: a member's name, or its fingerprint
    /// or the start of it (4 hex digits at least; case and separators do not matter).
    func member(_ text: String, in project: SharedProject) throws(ResponseError) -> MemberKey {
        guard let roster = project.roster else {
            throw .invalidParams("params.member: the members of project \(DisplayText.clean(project.name)) are not known here yet")
        }
        let keys = roster.namedKeys.filter { roster.role(of: $0) != nil || roster.removed.contains($0) }
        let digits = PeerIdentity.normalized(text)
        let looksLikeFingerprint = digits.count >= 4 && text.allSatisfy { $0.isHexDigit || $0 == "-" || $0 == ":" || $0 == " " }
        let matches = keys.filter { key in
            name(of: key, in: project) == text
                || (looksLikeFingerprint && PeerIdentity.normalized(PeerIdentity.fingerprint(ofPublicKey: key.bytes)).hasPrefix(digits))
        }.sorted()
        if matches.count == 1, let only = matches.first { return only }
        let listed = (matches.isEmpty ? keys.sorted() : matches).prefix(20).map { shown($0, in: project) }.joined(separator: ", ")
        let asked = DisplayText.clean(text, limit: 64)
        if matches.isEmpty {
            throw .invalidParams("params.member: no member of project \(DisplayText.clean(project.name)) is named \(asked) or has a fingerprint starting so; its members: \(listed)")
        }
        throw .invalidParams("params.member: \(asked) matches \(matches.count) members of project \(DisplayText.clean(project.name)): \(listed); give more of the fingerprint")
    }

    /// The name `key` is known by here: this daemon's user name for its own key, else the user
    /// name the key last linked with.
    func name(of key: MemberKey, in project: SharedProject) -> String? {
        if key == ownKey, !parts.identity.userName.isEmpty { return parts.identity.userName }
        return project.names[key]
    }

    private func shown(_ key: MemberKey, in project: SharedProject) -> String {
        let fingerprint = PeerIdentity.fingerprint(ofPublicKey: key.bytes)
        return name(of: key, in: project).map { "\($0) (\(fingerprint))" } ?? fingerprint
    }

    /// `key` as `project/members` lists it.
    func entry(_ key: MemberKey, in project: SharedProject) -> ProjectMembersRequest.Member {
        let own = key == ownKey
        let role = own ? ownRole(inProject: project.key) : project.roster?.role(of: key)
        let online = own || links(of: project).contains { $0.peerKey == key.bytes }
        return .init(fingerprint: PeerIdentity.fingerprint(ofPublicKey: key.bytes), name: name(of: key, in: project),
                     role: role?.rawValue, online: online, you: own)
    }
}

// What a project's roster allows (the data path and the editors ask; protocol/decisions/roles.md).
extension ProjectService: ProjectAccess {
    /// From the roster; before a joiner's roster arrives, the host its line pinned is an owner
    /// and no one else has a role.
    func role(ofPeerKey peerKey: [UInt8], inProject projectKey: String) -> ProjectRole? {
        guard let project = projects[projectKey], project.active, let key = MemberKey(peerKey) else { return nil }
        guard let roster = project.roster else { return isPinned(peerKey, in: project) ? .owner : nil }
        return roster.role(of: key)
    }

    /// From the roster (this daemon's identity key); before a joiner's roster arrives, its
    /// pending role (`read` for a new join, `write` for one made before roles existed).
    func ownRole(inProject projectKey: String) -> ProjectRole? {
        guard let project = projects[projectKey] else { return nil }
        guard let roster = project.roster else { return project.role == .host ? .owner : project.pendingRole }
        return ownKey.flatMap { roster.role(of: $0) }
    }
}
