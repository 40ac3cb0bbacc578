/// Every method of the editor protocol, with its direction and kind; `protocol/README.md`
/// describes each one. The daemon answers `Method not found` for anything else.
public enum MessageRegistry {
    public enum Kind: Sendable { case request, notification, requestOrNotification }
    public enum Direction: Sendable { case editorToDaemon, daemonToEditor, both }

    public struct Entry: Sendable {
        public var method: String
        public var kind: Kind
        public var direction: Direction
    }

    public static let protocolVersion = 1

    public static let statusMethod = "quire/status"

    public static let all: [Entry] = [
        Entry(method: InitializeRequest.method, kind: .request, direction: .editorToDaemon),
        Entry(method: LifecycleMethod.initialized, kind: .notification, direction: .editorToDaemon),
        Entry(method: LifecycleMethod.shutdown, kind: .request, direction: .editorToDaemon),
        Entry(method: LifecycleMethod.exit, kind: .notification, direction: .editorToDaemon),
        Entry(method: LifecycleMethod.cancelRequest, kind: .notification, direction: .editorToDaemon),
        Entry(method: OpenDocumentRequest.method, kind: .request, direction: .editorToDaemon),
        Entry(method: DocumentRequest.closeMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: DocumentRequest.textMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: DocumentRequest.resyncMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: DocumentRequest.undoMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: DocumentRequest.redoMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: ListDocumentsRequest.method, kind: .request, direction: .editorToDaemon),
        Entry(method: SaveDocumentRequest.method, kind: .request, direction: .editorToDaemon),
        Entry(method: MergeDocumentRequest.method, kind: .request, direction: .editorToDaemon),
        Entry(method: SavedDocumentNotification.method, kind: .notification, direction: .editorToDaemon),
        Entry(method: EditDocumentMessage.method, kind: .requestOrNotification, direction: .both),
        Entry(method: CursorMessage.method, kind: .notification, direction: .both),
        Entry(method: statusMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: PeerRequests.listenMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: PeerRequests.stopListeningMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: PeerRequests.connectMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: PeerRequests.disconnectMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: PeerRequests.statusMethod, kind: .request, direction: .editorToDaemon),
        Entry(method: PeerRequests.changedMethod, kind: .notification, direction: .daemonToEditor),
    ]
}
