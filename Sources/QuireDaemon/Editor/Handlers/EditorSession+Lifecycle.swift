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
    func handle(in session: EditorSession) throws(ResponseError) {}
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
        if let user = request.user, !PeerLink.displayName(user.name).isEmpty {
            self.user = user
            daemon.editorNamed(user.name)
        } else {
            // No name of its own: the daemon's (`--user-name`, git's user.name, $USER, the login).
            self.user = WireUser(name: PeerLink.displayName(daemon.configuration.userName), color: request.user?.color)
        }
        state = .running
        logger.info("session \(id): initialized by \(request.clientName ?? "an unnamed client") for \(user.name), positions in \(encoding.rawValue)")
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
