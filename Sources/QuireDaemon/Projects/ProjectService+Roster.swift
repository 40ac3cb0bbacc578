import QuireProject
import QuireProtocol

// The roster carried and kept (protocol/decisions/roles.md): who may do what in each project,
// admission of a link when it comes up (by its key, and by which secret made it), the roster's
// payloads on peer frame kind 12 (`RosterPayload`), and what a change does to live links.
extension ProjectService {
    /// The longest member name kept (bytes, after cleaning).
    static let maximumMemberNameBytes = 64

    /// This daemon's identity key as a member of a project.
    var ownKey: MemberKey? { MemberKey(parts.identity.identity.publicKey) }

    /// A project this daemon shares that has no roster (shared before roles existed) gets one
    /// founded by this daemon; its member secret, the line it gave out, keeps admitting new keys
    /// as `write`, as it did.
    func foundRosterIfNeeded(_ project: SharedProject) {
        guard project.roster == nil, project.role == .host, let own = ownKey else { return }
        project.roster = ProjectRoster(projectKey: project.key, founder: own)
        project.memberSecretAdmits = true
        logger.info("project \(project.key): a roster founded by this daemon (shared before roles; its line still admits writers)")
    }

    /// Whether `peerKey` is the key the join line pinned (a joined project's host).
    func isPinned(_ peerKey: [UInt8], in project: SharedProject) -> Bool {
        PeerIdentity.normalized(PeerIdentity.fingerprint(ofPublicKey: peerKey)) == PeerIdentity.normalized(project.fingerprint)
    }

    // MARK: Admission

    /// A link of `project`'s scope came up: true when it may stay; otherwise it was told why and
    /// cut. A member's link gets the whole roster (and, made with an invitation's secret, the
    /// member secret); a key the roster does not name is admitted only through an invitation of
    /// this owner daemon (or a project shared before roles' member secret).
    func admit(_ link: any PeerEndpoint, to project: SharedProject) -> Bool {
        // Every real link proved a key by now; a link without one is a test's stand-in.
        guard let keyBytes = link.peerKey, let peer = MemberKey(keyBytes) else { return true }
        let name = DisplayText.clean(project.name)
        guard let roster = project.roster else {
            // A joiner before its roster: only the host whose key its line pinned.
            guard isPinned(keyBytes, in: project) else {
                refuse(link, in: project, "this daemon does not know the members of project \(name) yet")
                return false
            }
            noteName(of: link, as: peer, in: project)
            return true
        }
        if roster.removed.contains(peer) {
            sendRoster(of: project, to: [link])   // the signed removal tells it why
            refuse(link, in: project, "removed from project \(name) by an owner")
            return false
        }
        let tag = link.secretTag
        let madeWithMemberSecret = tag == nil || tag == PeerSecret.tag(of: project.secret)
        let owner = ownKey.map { roster.role(of: $0) == .owner } ?? false
        if roster.role(of: peer) != nil {
            noteName(of: link, as: peer, in: project)
            sendRoster(of: project, to: [link])
            if !madeWithMemberSecret, owner, !project.redeeming {
                link.sendProjectFrame(key: project.key, payload: RosterPayload.memberSecret(project.secret).encoded)
            }
            return true
        }
        if let invitation = project.invitations.first(where: { $0.tag == tag }), !madeWithMemberSecret {
            if invitation.hasExpired(now: now()) {
                drop(invitation, of: project)
                refuse(link, in: project, "the invitation to project \(name) has expired; ask its owner for a new one")
                return false
            }
            if invitation.isUsedUpByNextAdmission(limit: invitationUseLimit) {
                drop(invitation, of: project)
                if !invitation.once {
                    let message = "The line of project \(name) for \(invitation.role.rawValue) admitted \(invitationUseLimit) keys and is used up; share the folder again (quire share) or make another (quire invite) for more people"
                    logger.warning("project \(project.key): \(message)")
                    notifyEditors(ShowMessageNotification(type: .warning, message: message))
                }
            } else if let index = project.invitations.firstIndex(where: { $0.tag == tag }) {
                project.invitations[index].uses += 1
                keep(project)
            }
            return admitNew(peer, as: invitation.role, link: link, to: project)
        }
        if madeWithMemberSecret, project.memberSecretAdmits, owner {
            return admitNew(peer, as: .write, link: link, to: project)
        }
        refuse(link, in: project, madeWithMemberSecret
            ? "not a member of project \(name)"
            : "the invitation to project \(name) this link was made with was used up or withdrawn")
        return false
    }

    /// Signs `peer` into `project` with `role` (this daemon is an owner), tells the other links,
    /// and hands the new member the roster and the member secret.
    private func admitNew(_ peer: MemberKey, as role: ProjectRole, link: any PeerEndpoint, to project: SharedProject) -> Bool {
        guard var roster = project.roster else { return false }
        let before = roster.roles
        let change: RosterChange
        do { change = try roster.change(peer, to: role, signer: parts.identity.identity.privateKey) } catch {
            refuse(link, in: project, "project \(DisplayText.clean(project.name)) cannot take a new member: \(error)")
            return false
        }
        project.roster = roster
        noteName(of: link, as: peer, in: project)
        keep(project)
        logger.info("peer link \(link.id): project \(project.key): \(peer) admitted as \(role.rawValue)")
        sendChanges([change], of: project, to: links(of: project).filter { $0.id != link.id })
        sendRoster(of: project, to: [link])
        link.sendProjectFrame(key: project.key, payload: RosterPayload.memberSecret(project.secret).encoded)
        if roster.roles != before { rolesChanged(project.key) }
        return true
    }

    /// Tells `link` why it is refused (a payload its daemon acts on), then cuts it.
    func refuse(_ link: any PeerEndpoint, in project: SharedProject, _ reason: String) {
        logger.warning("peer link \(link.id): project \(project.key): refused: \(reason)")
        link.sendProjectFrame(key: project.key, payload: RosterPayload.refused(reason).encoded)
        link.cut(reason)
    }

    /// Remembers the user name `peer` linked with (cleaned, bounded; at most one per key the
    /// roster may name).
    private func noteName(of link: any PeerEndpoint, as peer: MemberKey, in project: SharedProject) {
        guard let user = link.peerUser, !user.isEmpty else { return }
        let name = DisplayText.clean(user, limit: Self.maximumMemberNameBytes)
        guard project.names[peer] != name, project.names[peer] != nil || project.names.count < ProjectRoster.maximumMembers else { return }
        project.names[peer] = name
        keep(project)
    }

    /// Forgets `invitation` (used up, expired or withdrawn): its secret opens no link any more.
    func drop(_ invitation: ProjectInvitation, of project: SharedProject) {
        project.invitations.removeAll { $0.tag == invitation.tag }
        stopRelay(project, for: invitation)
        unregisterInvitation(invitation.secret, project.key)
        keep(project)
    }

    // MARK: Sending

    func sendRoster(of project: SharedProject, to links: [any PeerEndpoint]) {
        guard let roster = project.roster else { return }
        sendChanges(roster.orderedChanges, of: project, to: links)
    }

    func sendChanges(_ changes: [RosterChange], of project: SharedProject, to links: [any PeerEndpoint]) {
        guard let roster = project.roster, !links.isEmpty else { return }
        let payload = RosterPayload.roster(founder: roster.founder, changes: changes).encoded
        for link in links { link.sendProjectFrame(key: project.key, payload: payload) }
    }

    // MARK: Receiving

    /// A roster payload on a link of `project`'s scope. Throwing cuts the link; nothing of a
    /// refused payload is kept.
    func receiveRosterPayload(_ payload: [UInt8], in project: SharedProject, from link: any PeerEndpoint) throws {
        let message: RosterPayload
        do { message = try RosterPayload.decode(payload) } catch {
            throw ProjectFrameError(description: "project \(project.key): a roster frame does not decode: \(error)")
        }
        switch message {
        case .roster(let founder, let changes): try receiveRoster(founder: founder, changes: changes, in: project, from: link)
        case .memberSecret(let secret): try receiveMemberSecret(secret, in: project, from: link)
        case .refused(let reason): receiveRefusal(reason, in: project, from: link)
        }
    }

    /// Roster changes (verified, bounded) are kept, passed on to the project's other links, and
    /// take effect. A joiner takes its first roster only from the host it pinned, which must be
    /// an owner in it.
    private func receiveRoster(founder: MemberKey, changes: [RosterChange], in project: SharedProject, from link: any PeerEndpoint) throws {
        let key = project.key
        var roster: ProjectRoster
        if let current = project.roster {
            guard founder == current.founder else { throw ProjectFrameError(description: "project \(key): a roster founded by another key") }
            roster = current
        } else {
            guard let peer = link.peerKey, isPinned(peer, in: project) else {
                throw ProjectFrameError(description: "project \(key): a first roster from a daemon that is not the project's host")
            }
            roster = ProjectRoster(projectKey: key, founder: founder)
        }
        let before = roster
        // Only owners' changes are taken; a batch with another's is refused before its
        // signatures are checked (`changeByNonOwner`), then once more after the replay.
        var stranger: RosterChange?
        do {
            stranger = try roster.changeByNonOwner(in: changes)
            if stranger == nil { try roster.apply(contentsOf: changes) }
        } catch {
            throw ProjectFrameError(description: "project \(key): a roster change is refused: \(error)")
        }
        if let stranger = stranger ?? changes.first(where: { !roster.everOwners.contains($0.author) }) {
            throw ProjectFrameError(description: "project \(key): a roster change signed by \(stranger.author), which was never an owner")
        }
        if project.roster == nil {
            guard let peer = link.peerKey.flatMap(MemberKey.init), roster.role(of: peer) == .owner else {
                throw ProjectFrameError(description: "project \(key): a roster in which the host is no owner")
            }
        }
        var seen = before.changes
        let fresh = changes.filter { seen.insert($0).inserted }
        guard project.roster == nil || !fresh.isEmpty else { return }
        let previousRoles = project.roster?.roles
        project.roster = roster
        keep(project)
        logger.info("peer link \(link.id): project \(key): \(fresh.count) roster changes")
        sendChanges(fresh, of: project, to: links(of: project).filter { $0.id != link.id })
        rosterChanged(project, previousRoles: previousRoles)
    }

    /// The member secret from an owner: a joiner that redeemed an invitation links with it from
    /// now on.
    private func receiveMemberSecret(_ secret: [UInt8], in project: SharedProject, from link: any PeerEndpoint) throws {
        guard project.role == .joined, let roster = project.roster, let peer = link.peerKey.flatMap(MemberKey.init),
              roster.role(of: peer) == .owner else {
            throw ProjectFrameError(description: "project \(project.key): a member secret from a daemon that is not an owner of it")
        }
        guard DocumentScope.projectKey(secret: secret) == project.key else {
            throw ProjectFrameError(description: "project \(project.key): a member secret that is not this project's")
        }
        guard project.redeeming || secret != project.secret else { return }
        do { try registerSecret(secret, project.scope, true) } catch {
            throw ProjectFrameError(description: "project \(project.key): the member secret cannot be held: \(error)")
        }
        project.secret = secret
        project.redeeming = false
        keep(project)
        logger.info("peer link \(link.id): project \(project.key): the member secret arrived")
        relinkWithMemberSecret(link, in: project)
    }

    /// The host refused this daemon (removed, an invitation expired or used up, not a member):
    /// the project stops here for good and editors are told.
    private func receiveRefusal(_ reason: String, in project: SharedProject, from link: any PeerEndpoint) {
        guard project.role == .joined, let peer = link.peerKey,
              isPinned(peer, in: project) || MemberKey(peer).flatMap({ project.roster?.role(of: $0) }) == .owner else { return }
        removedHere(project, reason: DisplayText.clean(reason, limit: RosterPayload.maximumReasonBytes))
    }

    // MARK: Effects of a change

    /// `project`'s roster changed (kept already; sent to the links already): the daemon hears of
    /// new roles, every link of a removed key is cut, and, when this daemon's own key was
    /// removed, the project stops here.
    func rosterChanged(_ project: SharedProject, previousRoles: [MemberKey: ProjectRole]?) {
        guard let roster = project.roster else { return }
        if roster.roles != previousRoles { rolesChanged(project.key) }
        for (key, old) in previousRoles ?? [:] {
            let new = roster.role(of: key)
            if new == nil || new.map({ $0 < old }) == true { withdrawSharedLines(of: project, above: new) }
        }
        let name = DisplayText.clean(project.name)
        for link in links(of: project) {
            guard let peer = link.peerKey.flatMap(MemberKey.init), roster.removed.contains(peer) else { continue }
            refuse(link, in: project, "removed from project \(name) by an owner")
        }
        if let own = ownKey, roster.removed.contains(own) {
            removedHere(project, reason: "removed from project \(name) by an owner")
        }
    }

    /// A member was just removed (`role` nil) or brought down to `role`: every line it may hold
    /// that gives more stops admitting new keys, or it would come back under a fresh identity
    /// key. Those are the lines shared with several people (the multi-use invitations, the
    /// standing one among them) and, in a project shared before roles, the member secret (which
    /// admits writers). Single-use lines stay (each went to one person). `project/share` prints a
    /// fresh standing line; `project/invite` makes new ones.
    func withdrawSharedLines(of project: SharedProject, above role: ProjectRole?) {
        let shared = project.invitations.filter { invitation in !invitation.once && (role.map { invitation.role > $0 } ?? true) }
        let memberSecret = project.memberSecretAdmits && (role.map { $0 < .write } ?? true)
        guard !shared.isEmpty || memberSecret else { return }
        for invitation in shared { drop(invitation, of: project) }
        if memberSecret { project.memberSecretAdmits = false }
        keep(project)
        logger.info("project \(project.key): a member was \(role.map { "made \($0.rawValue)" } ?? "removed"); \(shared.count) lines for several people giving more withdrawn (share again for a new line)")
    }

    /// This daemon was removed from `project` (or refused): editors hear it once, the project
    /// stops (no more dialing) and keeps its record, files and documents.
    func removedHere(_ project: SharedProject, reason: String) {
        guard project.removedReason == nil else { return }
        project.removedReason = reason
        logger.warning("project \(project.key) (\(DisplayText.clean(project.name))): \(reason)")
        notifyEditors(ProjectRemovedNotification(key: project.key, name: project.name, reason: reason))
        if project.active { try? stop(key: project.key) } else { keep(project) }
    }
}
