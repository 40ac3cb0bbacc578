import JSON

/// Every message of the editor protocol, as types: the requests and notifications an editor
/// sends (the daemon decodes a message by the type listed for its method, and answers
/// `Method not found` for anything else) and the notifications the daemon sends.
/// `protocol/README.md` describes each one.
///
/// Guarantees: a method is listed once per direction; `all` is derived from the lists.
public enum MessageRegistry {
    public enum Kind: Sendable { case request, notification, requestOrNotification }
    public enum Direction: Sendable { case editorToDaemon, daemonToEditor, both }

    public struct Entry: Sendable {
        public var method: String
        public var kind: Kind
        public var direction: Direction
    }

    public static let protocolVersion = 1

    /// The requests an editor may send.
    public static let requests: [any EditorRequest.Type] = [
        InitializeRequest.self, ShutdownRequest.self,
        OpenDocumentRequest.self, CloseDocumentRequest.self, DocumentTextRequest.self, ResyncDocumentRequest.self,
        UndoDocumentRequest.self, RedoDocumentRequest.self, ListDocumentsRequest.self, SaveDocumentRequest.self,
        MergeDocumentRequest.self, EditDocumentMessage.self, StatusRequest.self, WhoRequest.self,
        ListenRequest.self, StopListeningRequest.self, ConnectRequest.self, DisconnectRequest.self, PeerStatusRequest.self,
        ProjectShareRequest.self, ProjectJoinRequest.self, ProjectListRequest.self, ProjectStopRequest.self,
        ProjectInviteRequest.self, ProjectRoleRequest.self, ProjectRevokeRequest.self, ProjectMembersRequest.self,
    ]

    /// The notifications an editor may send.
    public static let editorNotifications: [any EditorNotification.Type] = [
        InitializedNotification.self, ExitNotification.self, CancelRequestNotification.self,
        EditDocumentMessage.self, CursorMessage.self, SavedDocumentNotification.self,
    ]

    /// The notifications the daemon sends.
    public static let daemonNotifications: [any DaemonNotification.Type] = [
        EditDocumentMessage.self, CursorMessage.self, PeerChangedNotification.self, DocumentForkedNotification.self,
        EditRefusedNotification.self, ShowMessageNotification.self, ProjectProgressNotification.self,
        ProjectRemovedNotification.self, ReadOnlyNotification.self,
    ]

    private static let requestsByMethod: [String: any EditorRequest.Type] =
        Dictionary(requests.map { ($0.method, $0) }, uniquingKeysWith: { first, _ in first })
    private static let notificationsByMethod: [String: any EditorNotification.Type] =
        Dictionary(editorNotifications.map { ($0.method, $0) }, uniquingKeysWith: { first, _ in first })

    /// The request type of `method`, or nil when an editor has no such request.
    public static func request(_ method: String) -> (any EditorRequest.Type)? { requestsByMethod[method] }

    /// The notification type of `method`, or nil when an editor sends no such notification.
    public static func notification(_ method: String) -> (any EditorNotification.Type)? { notificationsByMethod[method] }

    /// Every method with its kind and direction.
    public static var all: [Entry] {
        var entries: [Entry] = []
        var seen: Set<String> = []
        let daemonSends = Set(daemonNotifications.map { $0.method })
        let editorNotifies = Set(editorNotifications.map { $0.method })
        let editorRequests = Set(requests.map { $0.method })
        for method in requests.map({ $0.method }) + editorNotifications.map({ $0.method }) + daemonNotifications.map({ $0.method })
        where seen.insert(method).inserted {
            let kind: Kind = editorRequests.contains(method) ? (editorNotifies.contains(method) ? .requestOrNotification : .request)
                : .notification
            let fromEditor = editorRequests.contains(method) || editorNotifies.contains(method)
            let direction: Direction = fromEditor && daemonSends.contains(method) ? .both : fromEditor ? .editorToDaemon : .daemonToEditor
            entries.append(Entry(method: method, kind: kind, direction: direction))
        }
        return entries
    }
}
