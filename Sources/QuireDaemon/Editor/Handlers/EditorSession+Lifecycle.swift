import JSON
import QuireProtocol
import ReplicatingTypes

// The LSP lifecycle: `initialize`, `initialized`, `shutdown`, `exit`, `$/cancelRequest`.

extension InitializeRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result { try session.initialize(self) }
}

extension ShutdownRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> NullResult {
        session.state = .shutDown
        return NullResult()
    }
}

extension InitializedNotification: SessionNotification {
    /// What the daemon said at its start about where it listens (a kept port taken) is shown now.
    func handle(in session: EditorSession) throws(ResponseError) {
        for notice in session.daemon.projects.takeListeningNotices() { session.showWarning(notice) }
    }
}

extension ExitNotification: SessionNotification {
    static var acceptedInAnyState: Bool { true }
    func handle(in session: EditorSession) throws(ResponseError) { session.exit() }
}

extension CancelRequestNotification: SessionNotification {
    static var acceptedInAnyState: Bool { true }
    /// Requests are answered as they arrive: there is nothing left to cancel.
    func handle(in session: EditorSession) throws(ResponseError) {}
}

extension EditorSession {
    func initialize(_ request: InitializeRequest) throws(ResponseError) -> InitializeRequest.Result {
        if let version = request.protocolVersion, version != MessageRegistry.protocolVersion {
            throw .invalidParams("params.protocolVersion: \(version) is not supported; this daemon speaks version \(MessageRegistry.protocolVersion)")
        }
        let offered = request.positionEncodings.compactMap(PositionEncoding.init(rawValue:))
        encoding = offered.first ?? .utf16
        // The name and colour are shown to other editors, peers and the log: cleaned and cut as
        // every shown name is, the colour `#rrggbb` or dropped (as a peer's presence is read).
        let color = request.user?.color.flatMap { PresenceMessage.isColor($0) ? $0 : nil }
        if let given = request.user.map({ PeerLink.displayName($0.name) }), !given.isEmpty {
            self.user = WireUser(name: given, color: color)
            daemon.editorNamed(given)
        } else {
            // No name of its own: the daemon's (`--user-name`, git's user.name, $USER, the login).
            self.user = WireUser(name: PeerLink.displayName(daemon.configuration.userName), color: color)
        }
        state = .running
        let client = request.clientName.map { PeerLink.displayName($0) } ?? "an unnamed client"
        logger.info("session \(id): initialized by \(client) for \(user.name), positions in \(encoding.rawValue)")
        return InitializeRequest.Result(
            protocolVersion: MessageRegistry.protocolVersion, serverVersion: daemon.configuration.serverVersion,
            positionEncoding: encoding.rawValue, sessionID: id, replica: daemon.replica.description, user: user
        )
    }

    /// `exit`: status 0 after `shutdown`, 1 otherwise; everything logged is made durable first.
    func exit() {
        let status: Int32 = state == .shutDown ? 0 : 1
        logger.info("session \(id): exit with status \(status)")
        daemon.commit()
        onExit?(status)
    }
}
