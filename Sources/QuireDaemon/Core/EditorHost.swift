import JSON
import Logging
import QuireProtocol
import QuireProject
import ReplicatingTypes

/// What an editor session may ask of the daemon: exactly the members `EditorSession` uses, under
/// the names it has always used, each implemented by the part that owns it (`EditorServices`).
protocol EditorHost: AnyObject {
    var configuration: DaemonConfiguration { get }
    var logger: Logger { get }
    var replica: ReplicaID { get }
    var identity: PeerIdentity { get }
    var store: DocumentStore? { get }
    var transport: PeerTransport? { get }
    var sessions: [Int: any EditorEndpoint] { get }
    var links: [Int: any PeerEndpoint] { get }
    var dormantViews: DormantViews { get }
    /// What each project's roster allows.
    var projectAccess: (any ProjectAccess)? { get }
    /// Why this daemon's editors may not change document `uri` (`ProjectWriteRule`); nil when they may.
    func readOnlyReason(ofDocument uri: String) -> ReadOnlyReason?
    /// The name project `key` is shown by (cleaned; its key when it has none).
    func projectName(_ key: String) -> String
    var documentList: [ListDocumentsRequest.Entry] { get }
    func document(_ uri: String) -> SharedDocument?
    /// `DocumentRegistry.openDocument(_:creatingWith:)`; `makeText` gives the new text's operations
    /// with it (`FreshText`), so they are not read back from it.
    func openDocument(_ uri: String, creatingWith makeText: () -> (text: ReplicatingText, operations: [ReplicatingArrayOperation<Unicode.Scalar>]))
        throws(ResponseError) -> (SharedDocument, created: Bool)
    func close(_ uri: String, in session: EditorSession, forGood: Bool)
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, from session: EditorSession,
                    editID: String?, edit: (view: EditorView, epoch: Int, revision: Int)?) throws(ResponseError)
    func contributeFromOutside(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument) throws(ResponseError)
    func elementRoom(of document: SharedDocument) -> ElementRoom
    /// The replica to make edits of `document` as on `copy` (`ReplicaLender.replica(forEditing:of:preferring:)`).
    func replica(forEditing copy: ReplicatingText?, of document: SharedDocument, preferring: ReplicaID?) -> ReplicaID
    /// The pool of replica IDs local edits are made as.
    var localReplicas: LocalReplicas { get }
    func makeViewID() -> String
    func log(_ event: ViewEvent, of document: SharedDocument)
    func keepDormant(_ view: EditorView, of document: SharedDocument)
    func bind(_ document: SharedDocument, toFile path: String, content: [UInt8]?, writtenByEditor: Bool) throws(ResponseError)
    @discardableResult func mergeOutsideChanges(of document: SharedDocument) throws(ResponseError) -> Int
    func save(_ document: SharedDocument) throws(ResponseError) -> (path: String, hash: String, imported: Int)
    func editorSaved(_ document: SharedDocument, text: ReplicatingText)
    func editorNamed(_ name: String)
    func broadcastSelections(of session: EditorSession, in document: SharedDocument)
    func sendAllSelections(in document: SharedDocument, to session: EditorSession)
    func sharingStatus() -> JSONValue
    /// Links whose handshake is done and that are not closed.
    var establishedLinkCount: Int { get }
    /// `quire/status` `summary` as `session` sees it (`StatusSummary`).
    func statusSummary(for session: EditorSession) -> JSONValue
    /// `quire/who`: the people whose cursors this daemon knows, placed for `session` (`WhoIsHere`).
    func whoIsHere(for session: EditorSession) -> [WhoRequest.Person]
    /// Releases what waits for durability (the editor is exiting).
    func commit()
    /// The projects this daemon shares or joined.
    var projects: ProjectService { get }
}

extension EditorHost {
    func replica(forEditing copy: ReplicatingText?, of document: SharedDocument) -> ReplicaID {
        replica(forEditing: copy, of: document, preferring: nil)
    }
    func close(_ uri: String, in session: EditorSession) { close(uri, in: session, forGood: true) }
}

/// The `EditorHost` of every session: forwards each member to the part that owns it.
final class EditorServices: EditorHost {
    struct Parts {
        let configuration: DaemonConfiguration
        let logger: Logger
        let identity: LocalIdentity
        let store: DocumentStore?
        let replicas: ReplicaLender
        let sessions: SessionRegistry
        let links: PeerLinks
        let views: ViewKeeper
        let documents: DocumentRegistry
        let router: OperationRouter
        let files: FileBinder
        let presence: PresenceService
        let lifecycle: SessionLifecycle
        let gate: OutputGate
        let rounds: StabilityRounds
        let projects: ProjectService
        let writeRule: ProjectWriteRule
    }

    private let parts: Parts

    init(_ parts: Parts) { self.parts = parts }

    var configuration: DaemonConfiguration { parts.configuration }
    var logger: Logger { parts.logger }
    var replica: ReplicaID { parts.identity.replica }
    var identity: PeerIdentity { parts.identity.identity }
    var store: DocumentStore? { parts.store }
    var transport: PeerTransport? { parts.links.transport }
    var sessions: [Int: any EditorEndpoint] { parts.sessions.sessions }
    var links: [Int: any PeerEndpoint] { parts.links.links }
    var dormantViews: DormantViews { parts.views.dormantViews }
    var projectAccess: (any ProjectAccess)? { parts.writeRule.access }
    func readOnlyReason(ofDocument uri: String) -> ReadOnlyReason? { parts.writeRule.ownReadOnly(uri) }
    func projectName(_ key: String) -> String { parts.writeRule.name(of: key) }
    var documentList: [ListDocumentsRequest.Entry] { parts.documents.documentList }

    func document(_ uri: String) -> SharedDocument? { parts.documents.document(uri) }
    func openDocument(_ uri: String, creatingWith makeText: () -> (text: ReplicatingText, operations: [ReplicatingArrayOperation<Unicode.Scalar>]))
        throws(ResponseError) -> (SharedDocument, created: Bool) {
        try parts.documents.openDocument(uri, creatingWithOperations: makeText)
    }
    func close(_ uri: String, in session: EditorSession, forGood: Bool) { parts.lifecycle.close(uri, in: session, forGood: forGood) }
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, from session: EditorSession,
                    editID: String?, edit: (view: EditorView, epoch: Int, revision: Int)?) throws(ResponseError) {
        try parts.router.contribute(operations, to: document, from: session, editID: editID, edit: edit)
    }
    func contributeFromOutside(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument) throws(ResponseError) {
        try parts.router.contributeFromOutside(operations, to: document)
    }
    func elementRoom(of document: SharedDocument) -> ElementRoom { parts.router.elementRoom(of: document) }
    func replica(forEditing copy: ReplicatingText?, of document: SharedDocument, preferring: ReplicaID?) -> ReplicaID {
        parts.replicas.replica(forEditing: copy, of: document, preferring: preferring)
    }
    var localReplicas: LocalReplicas { parts.replicas.pool }
    func makeViewID() -> String { parts.views.makeViewID() }
    func log(_ event: ViewEvent, of document: SharedDocument) { parts.views.log(event, of: document) }
    func keepDormant(_ view: EditorView, of document: SharedDocument) { parts.views.keepDormant(view, of: document) }
    func bind(_ document: SharedDocument, toFile path: String, content: [UInt8]?, writtenByEditor: Bool) throws(ResponseError) {
        try parts.files.bind(document, toFile: path, content: content, writtenByEditor: writtenByEditor)
    }
    func mergeOutsideChanges(of document: SharedDocument) throws(ResponseError) -> Int { try parts.files.mergeOutsideChanges(of: document) }
    func save(_ document: SharedDocument) throws(ResponseError) -> (path: String, hash: String, imported: Int) { try parts.files.save(document) }
    func editorSaved(_ document: SharedDocument, text: ReplicatingText) { parts.files.editorSaved(document, text: text) }
    func editorNamed(_ name: String) { parts.identity.editorNamed(name) }
    func broadcastSelections(of session: EditorSession, in document: SharedDocument) { parts.presence.broadcastSelections(of: session, in: document) }
    func sendAllSelections(in document: SharedDocument, to session: EditorSession) { parts.presence.sendAllSelections(in: document, to: session) }
    func sharingStatus() -> JSONValue { SharingStatus(documents: parts.documents, rounds: parts.rounds).json() }
    var establishedLinkCount: Int { summary.establishedLinkCount }
    func statusSummary(for session: EditorSession) -> JSONValue { summary.json(for: session) }
    func whoIsHere(for session: EditorSession) -> [WhoRequest.Person] {
        WhoIsHere(documents: parts.documents, sessions: parts.sessions, links: parts.links.links, access: parts.projects)
            .people(for: session, encoding: session.encoding)
    }
    private var summary: StatusSummary { StatusSummary(documents: parts.documents, sessions: parts.sessions, peerLinks: parts.links) }
    func commit() { parts.gate.release() }
    var projects: ProjectService { parts.projects }
}
