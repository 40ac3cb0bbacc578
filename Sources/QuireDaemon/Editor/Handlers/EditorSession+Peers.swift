import JSON
import QuireProtocol
import ReplicatingTypes

// Peering asked by the editor (`peer/listen`, `peer/stopListening`, `peer/connect`,
// `peer/disconnect`) and what the daemon reports (`peer/status`, `quire/status`).

extension ListenRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        let transport = try session.peerTransport()
        do {
            return Result(port: try transport.listen(host: host, port: port))
        } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot listen on \(host):\(port): \(error)")
        }
    }
}

extension StopListeningRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        Result(stopped: try session.peerTransport().stopListening(port: port))
    }
}

extension ConnectRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> NullResult {
        let transport = try session.peerTransport()
        do {
            switch target {
            case .tcp(let host, let port): try transport.connect(host: host, port: port, fingerprint: fingerprint)
            case .relay(let host, let port): try transport.connect(relayHost: host, port: port, fingerprint: fingerprint)
            case .command(let command): try transport.connect(command: command, fingerprint: fingerprint)
            }
        } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot connect: \(error)")
        }
        return NullResult()
    }
}

extension DisconnectRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> NullResult {
        guard let peerLink = session.daemon.links[link] else { throw .invalidParams("params.link: no peer link \(link)") }
        peerLink.close("disconnected by an editor")
        return NullResult()
    }
}

extension PeerStatusRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result { session.peerStatus() }
}

extension StatusRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result { session.status() }
}

extension EditorSession {
    func status() -> StatusRequest.Result {
        StatusRequest.Result(sessionID: id, replica: daemon.replica.description, sessions: daemon.sessions.count,
                             documents: daemon.documentList, peers: peerStatus(), storage: storageStatus(),
                             summary: daemon.statusSummary(for: self))
    }

    /// Where documents are kept: nil when in memory only.
    private func storageStatus() -> StatusRequest.Storage? {
        guard let store = daemon.store else { return nil }
        return StatusRequest.Storage(dataDir: store.path, durability: store.durability.rawValue, failure: store.failure)
    }

    func peerStatus() -> PeerStatusRequest.Result {
        let pinnedByConfiguration = !daemon.configuration.trustedPeerFingerprints.isEmpty
        let access = daemon.projectAccess
        let links = daemon.links.values.sorted { $0.id < $1.id }.map { link in
            PeerStatusRequest.Link(
                link: link.id, state: link.state.rawValue, user: link.peerUser ?? "", address: link.address,
                bytesIn: link.bytesIn, bytesOut: link.bytesOut, operationsIn: link.operationsIn, operationsOut: link.operationsOut,
                behind: link.behind, encrypted: link.isEncrypted, fingerprint: link.peerFingerprint,
                pinned: link.expectedFingerprint != nil || pinnedByConfiguration, scope: link.scope?.description,
                role: access?.role(of: link)?.rawValue)
        }
        return PeerStatusRequest.Result(replica: daemon.replica.description, fingerprint: daemon.identity.fingerprint,
                                        listening: daemon.transport?.listeningPorts ?? [], links: links,
                                        documents: daemon.sharingStatus())
    }

    /// The daemon's network transport, when peering is possible: it needs a shared secret.
    func peerTransport() throws(ResponseError) -> PeerTransport {
        guard daemon.configuration.peerSecret != nil else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Peering needs a shared secret: start quire with QUIRE_SECRET set or --secret-file")
        }
        guard let transport = daemon.transport else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "This daemon has no network transport")
        }
        return transport
    }
}
