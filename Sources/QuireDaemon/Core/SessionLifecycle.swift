import Logging

/// An editor session closing a document, or going: its view logged or kept for its return, its
/// cursors gone from the other editors and the peers, a rebase that waited for it retried.
/// May call: the documents, the editors, the view keeper, presence, the peer links and the
/// output gate.
final class SessionLifecycle {
    private let logger: Logger
    private unowned let documents: any DocumentLookup
    private unowned let sessions: SessionRegistry
    private unowned let views: ViewKeeper
    private unowned let presence: PresenceService
    private unowned let links: PeerLinks
    private unowned let gate: OutputGate

    init(logger: Logger, documents: any DocumentLookup, sessions: SessionRegistry, views: ViewKeeper, presence: PresenceService,
         links: PeerLinks, gate: OutputGate) {
        self.logger = logger
        self.documents = documents
        self.sessions = sessions
        self.views = views
        self.presence = presence
        self.links = links
        self.gate = gate
    }

    /// `session` closes `uri`. `forGood`: the editor closed it (its view is logged as closed),
    /// rather than going away.
    func close(_ uri: String, in session: any EditorEndpoint, forGood: Bool) {
        let view = session.view(of: uri)
        session.forgetView(uri)
        guard let document = documents.document(uri) else { return }
        if forGood, let view { views.log(.closed(view: view.id), of: document) }
        if document.selections.removeValue(forKey: session.id) != nil {
            presence.broadcastSelections(of: session, in: document)
        }
        // A rebase that waited for the last editor to close it can go ahead now.
        if !sessions.isOpen(document) {
            for link in links.links.values where link.isEstablished { link.retryRebase(of: document) }
        }
    }

    /// Forgets a session whose connection closed; its cursors disappear from other editors.
    /// `shutDown`: the editor shut down cleanly and closed its documents for good; one whose
    /// connection just ended may come back (a daemon it reaches again, a reopened bridge) and
    /// reopen them, so its views are kept.
    func end(_ session: any EditorEndpoint, shutDown: Bool) {
        for uri in session.openDocuments {
            if !shutDown, let view = session.view(of: uri), let document = documents.document(uri) {
                views.keepDormant(view, of: document)
            }
            close(uri, in: session, forGood: shutDown)
        }
        sessions.remove(session.id)
        logger.info("editor session \(session.id) ended")
        presence.sendPending()   // peers' editors stop showing its cursors now
        gate.release()
    }
}
