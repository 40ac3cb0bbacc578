import JSON
import Logging
import QuireProject
import ReplicatingTypes

/// What a peer link may ask of the daemon: the members `PeerLink` uses, each implemented by the
/// part that owns it (`PeerServices`).
protocol PeerHost: AnyObject {
    var configuration: DaemonConfiguration { get }
    var logger: Logger { get }
    var replica: ReplicaID { get }
    var identity: PeerIdentity { get }
    var userName: String { get }
    var documents: [String: SharedDocument] { get }
    /// What each scope's documents hold together (`ScopeUsage`), for the quotas.
    var scopeUsage: ScopeUsage { get }
    var links: [Int: any PeerEndpoint] { get }
    /// `write`, held back until what it depends on is durable (`OutputGate`).
    func gated(_ write: @escaping ([UInt8]) -> Void) -> ([UInt8]) -> Void
    /// The end of a read from the peer (`OutputGate.endRead`).
    func endRead()
    /// Releases what waits for durability (`OutputGate.release`).
    func commit()
    func document(uri: String, id: UInt64) -> SharedDocument?
    func documentForPeer(uri: String, id: UInt64, from link: any PeerEndpoint, theirsIsEmpty: Bool) -> SharedDocument?
    func impossibleClaim(in vector: VersionVector, for document: SharedDocument) -> String?
    func markShared(_ document: SharedDocument, holder: ReplicaID?, change: (inout DocumentSharing) -> Void)
    func presenceMessages(of document: SharedDocument, for link: any PeerEndpoint) -> [PresenceMessage]
    func rebase(_ document: SharedDocument, onto state: ReplicatingText, epochs: Set<String>, from link: any PeerEndpoint) -> Bool
    func isOpen(_ document: SharedDocument) -> Bool
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, fromPeer origin: any PeerEndpoint)
    func adopt(_ state: ReplicatingText, into document: SharedDocument, fromPeer origin: any PeerEndpoint)
    func receiveStability(_ message: StabilityMessage, from link: any PeerEndpoint)
    func peerLinkEstablished(_ link: any PeerEndpoint)
    /// Why `link`, just authenticated, may not stay up (too many links), or nil.
    func refusal(ofEstablished link: any PeerEndpoint) -> String?
    func peerLinkClosed(_ link: any PeerEndpoint)
    /// The project service, for project frames and project links (nil when none runs).
    var projectFrames: (any ProjectFrames)? { get }
    /// What each project's roster allows (nil when no project service runs).
    var projectAccess: (any ProjectAccess)? { get }
    /// Who may change a project's documents and tree (`ProjectWriteRule`).
    var writeRule: ProjectWriteRule { get }
    /// Whether the secret of `scope` is still held (a link made with one removed meanwhile is cut).
    func isHeld(_ scope: DocumentScope) -> Bool
    /// Whether `uri` is the document of a file this daemon's project tree holds deleted
    /// (`DeletedFiles.isDeletedFile`): a peer's copy of it is not taken in when none is held here.
    func isDeletedFile(_ uri: String) -> Bool
}

extension PeerHost {
    func markShared(_ document: SharedDocument, holder: ReplicaID?) { markShared(document, holder: holder, change: { _ in }) }
    func documentForPeer(uri: String, id: UInt64, from link: any PeerEndpoint) -> SharedDocument? {
        documentForPeer(uri: uri, id: id, from: link, theirsIsEmpty: false)
    }
}

/// The `PeerHost` of every link: forwards each member to the part that owns it.
final class PeerServices: PeerHost {
    struct Parts {
        let configuration: DaemonConfiguration
        let logger: Logger
        let identity: LocalIdentity
        let replicas: ReplicaLender
        let sessions: SessionRegistry
        let links: PeerLinks
        let documents: DocumentRegistry
        let router: OperationRouter
        let presence: PresenceService
        let stability: StabilityService
        let rebaser: Rebaser
        let gate: OutputGate
        let writeRule: ProjectWriteRule
    }

    private let parts: Parts
    /// Set by the daemon (`Daemon.projectFrames`).
    weak var projectFrames: (any ProjectFrames)?
    /// The projects' deleted files (set by the daemon).
    weak var deletedFiles: (any DeletedFiles)?
    /// The rosters the daemon's write rule asks (`Daemon.projectAccess`).
    var projectAccess: (any ProjectAccess)? { parts.writeRule.access }
    var writeRule: ProjectWriteRule { parts.writeRule }

    init(_ parts: Parts) { self.parts = parts }

    var configuration: DaemonConfiguration { parts.configuration }
    var logger: Logger { parts.logger }
    var replica: ReplicaID { parts.identity.replica }
    var identity: PeerIdentity { parts.identity.identity }
    var userName: String { parts.identity.userName }
    var documents: [String: SharedDocument] { parts.documents.documents }
    var scopeUsage: ScopeUsage { parts.documents.usage }
    var links: [Int: any PeerEndpoint] { parts.links.links }
    func gated(_ write: @escaping ([UInt8]) -> Void) -> ([UInt8]) -> Void { parts.gate.gated(write) }
    func endRead() { parts.gate.endRead() }
    func commit() { parts.gate.release() }
    func document(uri: String, id: UInt64) -> SharedDocument? { parts.documents.document(uri: uri, id: id) }
    func documentForPeer(uri: String, id: UInt64, from link: any PeerEndpoint, theirsIsEmpty: Bool) -> SharedDocument? {
        parts.documents.documentForPeer(uri: uri, id: id, from: link, theirsIsEmpty: theirsIsEmpty)
    }
    func impossibleClaim(in vector: VersionVector, for document: SharedDocument) -> String? {
        parts.replicas.impossibleClaim(in: vector, for: document)
    }
    func markShared(_ document: SharedDocument, holder: ReplicaID?, change: (inout DocumentSharing) -> Void) {
        parts.documents.markShared(document, holder: holder, change: change)
    }
    func presenceMessages(of document: SharedDocument, for link: any PeerEndpoint) -> [PresenceMessage] {
        parts.presence.presenceMessages(of: document, for: link)
    }
    func rebase(_ document: SharedDocument, onto state: ReplicatingText, epochs: Set<String>, from link: any PeerEndpoint) -> Bool {
        parts.rebaser.rebase(document, onto: state, epochs: epochs, from: link)
    }
    func isOpen(_ document: SharedDocument) -> Bool { parts.sessions.isOpen(document) }
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, fromPeer origin: any PeerEndpoint) {
        parts.router.contribute(operations, to: document, fromPeer: origin)
    }
    func adopt(_ state: ReplicatingText, into document: SharedDocument, fromPeer origin: any PeerEndpoint) {
        parts.router.adopt(state, into: document, fromPeer: origin)
    }
    func receiveStability(_ message: StabilityMessage, from link: any PeerEndpoint) { parts.stability.receive(message, from: link) }
    func peerLinkEstablished(_ link: any PeerEndpoint) { parts.links.established(link) }
    func refusal(ofEstablished link: any PeerEndpoint) -> String? { parts.links.refusal(ofEstablished: link) }
    func peerLinkClosed(_ link: any PeerEndpoint) { parts.links.closed(link) }
    func isHeld(_ scope: DocumentScope) -> Bool { parts.links.isHeld(scope) }
    func isDeletedFile(_ uri: String) -> Bool { deletedFiles?.isDeletedFile(uri) ?? false }
}
