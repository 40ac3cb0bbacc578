import NIOCore

// Dialing relays (`RelayDialer`, protocol/relay.md): with the secret a scope holds at each dial,
// or with one given secret of it (an owner's invitation, protocol/decisions/roles.md).
extension PeerNetwork {
    /// Dials the relay at `host:port` with the rendezvous value of this daemon's secret and, once
    /// it pairs this daemon with another, peers over that connection; dials again like `connect`
    /// (`RelayDialer`, protocol/relay.md).
    func connect(relayHost host: String, port: Int, fingerprint: String?) throws {
        try connect(relayHost: host, port: port, fingerprint: fingerprint, scope: .general)
    }

    /// The same with the secret of `scope`: its rendezvous value, and a link (in either role the
    /// relay gives) that speaks with that secret only. The secret is the one `scope` holds at
    /// each dial (a joiner's turns from its invitation's into the member secret).
    func connect(relayHost host: String, port: Int, fingerprint: String?, scope: DocumentScope) throws {
        try connect(relayHost: host, port: port, fingerprint: fingerprint, scope: scope, secret: nil)
    }

    /// The same with `secret`, one of `scope`'s this daemon holds (an owner's invitation): its
    /// rendezvous value, and links that speak with it alone in either role. nil: `scope`'s secret.
    func connect(relayHost host: String, port: Int, fingerprint: String?, scope: DocumentScope, secret: [UInt8]?) throws {
        let current = secret ?? daemon.peerSecret(of: scope)
        guard let current else { throw scope == .general ? PeeringError.noSecret : PeeringError.noSecretOf(scope) }
        guard current.count >= PeerSecret.minimumMaterialBytes else { throw PeeringError.weakSecret }
        let tag = secret.map(PeerSecret.tag(of:))
        let rendezvous: () -> [UInt8]? = { [weak daemon] in
            guard let daemon, let value = secret ?? daemon.peerSecret(of: scope), value.count >= PeerSecret.minimumMaterialBytes else { return nil }
            return RelayRendezvous.value(secret: value)
        }
        let dialer = RelayDialer(host: host, port: port, scope: scope, secretTag: tag, rendezvous: rendezvous, loop: loop, logger: logger) {
            [weak self] accepts, onClose in
            self?.handler(address: "relay \(host):\(port)", incoming: false, accepts: accepts, fingerprint: fingerprint, scope: scope,
                          secret: secret, onClose: onClose)
        }
        dialer.resolverGate = resolverGate
        relays.append(dialer)
        dialer.start()
        logger.info("dialing the relay \(host):\(port)\(scope == .general ? "" : " for \(scope)")\(secret == nil ? "" : " with an invitation's secret")")
    }

    /// Stops the relay dialers of `scope` that speak with `secret` (an invitation used up,
    /// expired or withdrawn): a connection still waiting closes, a link made over one stays.
    func stopRelays(scope: DocumentScope, secret: [UInt8]) {
        let tag = PeerSecret.tag(of: secret)
        for relay in relays where relay.scope == scope && relay.secretTag == tag { relay.stopWaiting() }
        relays.removeAll { $0.scope == scope && $0.secretTag == tag }
    }
}
