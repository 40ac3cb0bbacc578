import JSON
import QuireProtocol

/// An editor request an `EditorSession` answers: every type in `MessageRegistry.requests`
/// conforms (in the session file of its concern), and the session dispatches through it.
protocol SessionRequest: EditorRequest {
    /// Does what the request asks in `session`, which is running (or, for `initialize`, not
    /// yet); throws, changing no document, when it cannot.
    func answer(in session: EditorSession) throws(ResponseError) -> Result
}

extension SessionRequest {
    /// Decodes `params` as this request and answers it in `session`.
    static func answer(params: JSONValue?, in session: EditorSession) throws(ResponseError) -> JSONValue {
        try Self(params: params).answer(in: session).json
    }
}

/// An editor notification an `EditorSession` handles: every type in
/// `MessageRegistry.editorNotifications` conforms.
protocol SessionNotification: EditorNotification {
    /// Handled whatever the session's state (`exit`, `$/cancelRequest`); the others only while
    /// it runs.
    static var acceptedInAnyState: Bool { get }
    /// Does what the notification says in `session`; throws (the notification is dropped and
    /// logged) when it cannot.
    func handle(in session: EditorSession) throws(ResponseError)
}

extension SessionNotification {
    static var acceptedInAnyState: Bool { false }

    /// Decodes `params` as this notification and handles it in `session`.
    static func handle(params: JSONValue?, in session: EditorSession) throws(ResponseError) {
        try Self(params: params).handle(in: session)
    }
}
