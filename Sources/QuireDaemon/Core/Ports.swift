import JSON
import QuireProtocol
import QuireProject
import ReplicatingTypes

// The narrow protocols by which the core's parts reach each other and the sessions above them.
// A part is given the few of these it needs, never the `Daemon`.

/// Documents by name, for parts that look documents up but never create or rename one.
protocol DocumentLookup: AnyObject {
    /// Every document this daemon holds, by name.
    var documents: [String: SharedDocument] { get }
    func document(_ uri: String) -> SharedDocument?
    /// The local copy of a peer's document `uri` with `id` (under `uri`, or `uri#id`).
    func document(uri: String, id: UInt64) -> SharedDocument?
}

/// What the core asks of one editor session (implemented by `EditorSession`): the views it
/// shows, what it still refers to, and the notifications the core sends it.
protocol EditorEndpoint: AnyObject {
    var id: Int { get }
    /// Initialized and not shut down.
    var isRunning: Bool { get }
    /// The user its editor named.
    var user: WireUser { get }
    /// The documents it has open, by name, sorted.
    var openDocuments: [String] { get }
    func view(of uri: String) -> EditorView?
    /// Elements its view and undo history of `uri` may still refer to.
    func referencedIDs(in uri: String) -> [ElementIDRange]
    func forgetView(_ uri: String)
    func sendSelections(of sessionID: Int, in document: SharedDocument)
    func sendSelections(number sessionID: Int, selection remote: SharedDocument.RemoteSelection?, in document: SharedDocument)
    /// Sends one daemon edit per document with operations its editor has not seen.
    func sendPendingEdits()
    func showError(_ message: String)
    func sendPeerChange(link: Int, event: String, user: String, address: String, reason: String?)
    /// A peer's document named `uri` has another history; it is kept here as `copy` (`document/forked`).
    func sendDocumentForked(uri: String, copy: String, user: String?, address: String)
    /// This daemon's role in project `key` may have changed: tells the editor of every open
    /// document of it whose writability changed (`document/readOnly`).
    func projectRolesChanged(key: String)
}

/// The editors of this daemon as a whole (implemented by `SessionRegistry`).
protocol EditorNotifier: AnyObject {
    /// Every live session, in id order.
    var inOrder: [any EditorEndpoint] { get }
    /// Whether an editor session shows `document`.
    func isOpen(_ document: SharedDocument) -> Bool
}

/// What the core asks of one peer link (implemented by `PeerLink`): its state and identity,
/// and the frames the core has it send.
protocol PeerEndpoint: AnyObject {
    var id: Int { get }
    var state: PeerLinkState { get }
    var wasEstablished: Bool { get }
    var closeReason: String? { get }
    var isIncoming: Bool { get }
    var remoteHost: String? { get }
    /// The peer daemon's replica ID, once it proved the secret.
    var peerReplica: ReplicaID? { get }
    var peerUser: String? { get }
    var address: String { get }
    var peerFingerprint: String? { get }
    /// The peer daemon's Ed25519 identity key (32 bytes), once it proved it.
    var peerKey: [UInt8]? { get }
    var expectedFingerprint: String? { get }
    var isEncrypted: Bool { get }
    var bytesIn: Int { get }
    var bytesOut: Int { get }
    var operationsIn: Int { get }
    var operationsOut: Int { get }
    /// Elements this daemon has and the peer is not known to have.
    var behind: Int { get }
    /// The scope of the secret the link was made with (known from the start on a link this daemon
    /// dialed, once the connector's proof checked out on one it accepted): it carries only
    /// documents of this scope (protocol/decisions/project-sharing.md).
    var scope: DocumentScope? { get }
    /// The tag (`PeerSecret.tag(of:)`) of the secret the link was made with, known when `scope`
    /// is: tells a project's member secret from its invitations' (protocol/decisions/roles.md).
    var secretTag: String? { get }

    func sendOperations(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument)
    func sendPresence(_ message: PresenceMessage)
    func sendStability(_ message: JSONValue)
    /// Sends project `key`'s tree operations (peer frame kind 12, `ProjectTreeCoding`); only on a
    /// link of that project's scope.
    func sendProjectFrame(key: String, payload: [UInt8])
    /// Tells the peer about a document created here after the link came up.
    func announce(_ document: SharedDocument)
    /// Sends all of `document` to a peer that lacks it, at the pace the peer reads.
    func sendWhole(_ document: SharedDocument)
    /// Asks again for the state of `document` when this copy still has to rebase onto the peer's.
    func retryRebase(of document: SharedDocument)
    /// Presence the peer sent that this link's rate allows applying at `now` (monotonic seconds).
    func takeQueuedPresence(now: Double) -> [PresenceMessage]
    /// A presence message refused for its origin (logged once per link).
    func refusedPresence(_ reason: String)
    /// Heartbeats, dead-peer detection and handshake deadlines.
    func tick(now: Double, interval: Double)
    func sendDueDigests()
    /// Whether this established link's first catch-up of document `uri` is over (`FirstCatchUp`).
    func hasCaughtUp(on uri: String) -> Bool
    /// Whether what the peer sends of `subject` (a document, or a project's tree) may change it
    /// here: no when the peer's key may not write in the link's project (`ProjectWriteRule`),
    /// which is logged once per link and subject (`what` says what was refused).
    func mayChange(_ subject: String, what: String) -> Bool
    /// Disconnects a misbehaving peer, saying why.
    func cut(_ reason: String)
    /// Closes the link without blame.
    func close(_ reason: String)
}

extension PeerEndpoint {
    var isEstablished: Bool { state == .established }
    /// Stand-ins for links in tests hold no roles.
    func mayChange(_ subject: String, what: String) -> Bool { true }
    var secretTag: String? { nil }
}

/// The one path by which operations reach a document, its log, its editors and the peers
/// (implemented by `OperationRouter`).
protocol OperationSink: AnyObject {
    /// Operations that came from outside every editor and peer (a file changed on disk, an undo).
    func contributeFromOutside(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument) throws(ResponseError)
}

/// An editor connection whose messages a reopen may hold back until the peers caught up
/// (implemented by `EditorConnection`; `ReopenWaits`).
protocol HeldMessageSource: AnyObject {
    var sessionID: Int { get }
    /// Handles one held message and sends its reply.
    func process(_ body: [UInt8])
}

/// The projects this daemon shares or joined, as the peer links see them (implemented by
/// `ProjectService`; protocol/decisions/project-sharing.md).
/// What a project's roster allows (protocol/decisions/roles.md): asked before a peer's frame
/// changes a document or the tree of a project, and before an editor's edit of a project
/// document goes in. The general scope has no roster: everything is allowed there and these are
/// not asked.
protocol ProjectAccess: AnyObject {
    /// The role of the daemon whose Ed25519 identity key is `peerKey` (32 bytes) in project
    /// `projectKey`; nil when the roster does not name it or removed it.
    func role(ofPeerKey peerKey: [UInt8], inProject projectKey: String) -> ProjectRole?
    /// This daemon's own role in project `projectKey`; nil when it shares or follows no such
    /// project.
    func ownRole(inProject projectKey: String) -> ProjectRole?
}

protocol ProjectFrames: AnyObject {
    /// A link of project `key`'s scope was established: the service sends it the whole tree.
    func projectLinkEstablished(_ link: any PeerEndpoint, key: String)
    /// Tree operations a link of project `key`'s scope sent (the link's scope is checked before).
    /// Throwing cuts the link with the error's description.
    func receiveProjectFrame(key: String, payload: [UInt8], from link: any PeerEndpoint) throws
}

/// What the projects say about the documents of files their trees deleted (implemented by
/// `ProjectService`; protocol/decisions/project-tree.md, *Forgetting a deleted file's document*).
/// Asked by the core before a deleted file's document is forgotten, and by the peer links before
/// a peer's copy of a document is taken in.
protocol DeletedFiles: AnyObject {
    /// Whether `uri` names the document of a file that an active folder project's tree holds
    /// deleted (the tree knows the file and its register holds no path).
    func isDeletedFile(_ uri: String) -> Bool
    /// Why this daemon's projects still need document `uri` (not a deleted file's, its file still
    /// on disk here, a disk pass in flight), nil when they do not.
    func reasonToKeep(_ uri: String) -> String?
    /// The documents of deleted files this daemon may no longer need (`reasonToKeep` is nil for
    /// them now), in a stable order, at most `limit`.
    func forgettableDocuments(limit: Int) -> [String]
}
