import QuireProject
import QuireProtocol

// A hosted project's relay (protocol/decisions/roles.md, *Through a relay*): a joiner that reaches
// the host only through the relay names the rendezvous value of the secret it holds, an
// invitation's until it is admitted, then the member secret's. So the owner daemon waits at the
// relay once with its member secret and once with each live invitation's secret, each
// connection speaking that secret alone.
extension ProjectService {
    /// The mark in `relayDialed` of the member secret's dialer.
    static let memberSecretDialer = "member"

    /// Dials `project`'s relay (a hosted, active project with one) with its member secret and
    /// each invitation's secret not yet dialed and not expired. Throws when the relay's address
    /// is not one or the transport refuses.
    func dialRelay(_ project: SharedProject) throws {
        guard project.role == .host, project.active, let relay = project.relay, let transport = parts.links.transport else { return }
        let address = try PeerAddress(relay)
        if !project.relayDialed.contains(Self.memberSecretDialer) {
            try transport.connect(relayHost: address.host, port: Int(address.port), fingerprint: nil, scope: project.scope)
            project.relayDialed.insert(Self.memberSecretDialer)
        }
        for invitation in project.invitations { dialRelay(project, for: invitation) }
    }

    /// Waits at `project`'s relay with `invitation`'s secret (made or loaded), unless it does
    /// already or the invitation expired.
    func dialRelay(_ project: SharedProject, for invitation: ProjectInvitation) {
        guard project.role == .host, project.active, let relay = project.relay, let transport = parts.links.transport,
              !invitation.hasExpired(now: now()), !project.relayDialed.contains(invitation.tag) else { return }
        do {
            let address = try PeerAddress(relay)
            try transport.connect(relayHost: address.host, port: Int(address.port), fingerprint: nil, scope: project.scope,
                                  secret: invitation.secret)
            project.relayDialed.insert(invitation.tag)
        } catch {
            logger.warning("project \(project.key): cannot wait at the relay with an invitation: \(DisplayText.clean("\(error)", limit: 200))")
        }
    }

    /// Stops waiting at the relay with `invitation`'s secret (used up, expired, withdrawn); a
    /// link it made stays.
    func stopRelay(_ project: SharedProject, for invitation: ProjectInvitation) {
        guard project.relayDialed.remove(invitation.tag) != nil else { return }
        parts.links.transport?.stopRelays(scope: project.scope, secret: invitation.secret)
    }

    /// A joiner got the member secret over `link`, made through a relay with an invitation's
    /// secret: that link ends, so that the joiner pairs again under the member secret's
    /// rendezvous and the owner's connection for the invitation is free for the next joiner.
    func relinkWithMemberSecret(_ link: any PeerEndpoint, in project: SharedProject) {
        guard link.address.hasPrefix("relay ") else { return }
        logger.info("peer link \(link.id): project \(project.key): linking again through the relay with the member secret")
        link.close("the member secret arrived: linking again through the relay with it")
    }
}
