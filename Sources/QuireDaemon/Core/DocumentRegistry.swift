import Logging
import QuireProtocol
import ReplicatingTypes

/// The documents this daemon holds, by name: loading from the data directory, lookup, creation,
/// the mapping of a peer's documents to local ones (two histories under one name are kept apart
/// as `name#id`, never merged), and each document's sharing record.
/// May call: the store, the view keeper, the editors (`EditorNotifier`, `SessionRegistry`) and
/// the peer links (a new document is announced to every peer at once).
final class DocumentRegistry: DocumentLookup {
    private(set) var documents: [String: SharedDocument] = [:]
    /// Hears of every document taken in here and of every change of one (`DocumentChanges`).
    let changes = DocumentChanges()
    /// What each scope's documents hold together (kept by `changes`).
    let usage = ScopeUsage()
    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let store: DocumentStore?
    private let replica: ReplicaID
    private let clock: DaemonClock
    private let randomBytes: (Int) -> [UInt8]
    private unowned let views: ViewKeeper
    private unowned let sessions: SessionRegistry
    private unowned let links: PeerLinks

    init(configuration: DaemonConfiguration, logger: Logger, store: DocumentStore?, replica: ReplicaID, clock: DaemonClock,
         randomBytes: @escaping (Int) -> [UInt8], views: ViewKeeper, sessions: SessionRegistry, links: PeerLinks) {
        self.configuration = configuration
        self.logger = logger
        self.store = store
        self.replica = replica
        self.clock = clock
        self.randomBytes = randomBytes
        self.views = views
        self.sessions = sessions
        self.links = links
        changes.listen { [usage] document in usage.note(document) }
        changes.listenToCompaction { [usage] document in usage.note(document) }
    }

    func document(_ uri: String) -> SharedDocument? { documents[uri] }

    func document(uri: String, id: UInt64) -> SharedDocument? {
        if let document = documents[uri], document.id == id { return document }
        if let renamed = documents["\(uri)#\(String(id, radix: 16))"], renamed.id == id { return renamed }
        return nil
    }

    /// Takes in every document of the data directory. Names stay unique: a second document
    /// under a name already taken is kept as `name#id`, as with peers.
    func load(from store: DocumentStore) {
        var recoveries: [UInt64: ViewRecovery] = [:]
        let loadedDocuments = store.loadDocuments(rebuildingViews: { uri, id in
            let recovery = ViewRecovery(uri: uri, replica: ReplicaID(0))
            recoveries[id] = recovery
            return recovery
        })
        for loaded in loadedDocuments {
            var uri = loaded.uri
            if documents[uri] != nil { uri = "\(loaded.uri)#\(String(loaded.id, radix: 16))" }
            let document = SharedDocument(uri: uri, id: loaded.id, text: loaded.text)
            document.file = loaded.binding
            document.everShared = loaded.shared
            document.sharing = loaded.sharing
            document.appliedEditIDs = loaded.editIDs
            add(document)
            let kept = recoveries[loaded.id]?.views ?? []
            for view in kept { _ = views.dormantViews.keep(view, of: loaded.id) }
            for view in recoveries[loaded.id]?.detached ?? [] { _ = views.dormantViews.keepDetached(view, of: loaded.id) }
            if let recovery = recoveries[loaded.id], recovery.damaged > 0 {
                logger.warning("document \(uri): \(recovery.damaged) editor views in its snapshot are unreadable (\(recovery.damage ?? "")); those editors' reopens merge as text")
            }
            logger.info("document \(uri) loaded: \(loaded.text.count) characters, \(loaded.operationCount) logged operations replayed, \(kept.count) editor views kept")
        }
    }

    /// Holds `document` under its name from now on, its changes told to `changes`.
    private func add(_ document: SharedDocument) {
        documents[document.uri] = document
        document.changes = changes
        changes.changed(document)
    }

    private func randomID() -> UInt64 {
        randomBytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The document `uri`, created with `makeText()` when this daemon does not have it yet; a new
    /// document is announced to every peer at once. Throws `documentTooLarge`, creating nothing,
    /// when the new text holds more elements than a document may (`ElementRoom`).
    func openDocument(_ uri: String, creatingWith makeText: () -> ReplicatingText) throws(ResponseError) -> (SharedDocument, created: Bool) {
        // Its operations are read back only for a store or a link to give them to.
        try openDocument(uri, creatingWithOperations: {
            let text = makeText()
            return (text, store == nil && links.links.isEmpty ? [] : text.operations())
        })
    }

    /// As `openDocument(_:creatingWith:)`, `makeText` giving the new text's operations with it
    /// (`FreshText`: what `operations()` of it gives), so they are not read back from it.
    func openDocument(_ uri: String, creatingWithOperations makeText: () -> (text: ReplicatingText, operations: [ReplicatingArrayOperation<Unicode.Scalar>]))
        throws(ResponseError) -> (SharedDocument, created: Bool) {
        if let existing = documents[uri] { return (existing, false) }
        let (text, operations) = makeText()
        try ElementRoom(uri: uri, held: 0, limit: configuration.maximumElementsPerDocument)
            .check(adding: Int(clamping: text.scalars.claimedElementCount))
        let document = SharedDocument(uri: uri, id: randomID(), text: text)
        add(document)
        store?.create(uri: uri, id: document.id, initial: operations)
        logger.info("document \(uri) created with \(document.text.count) characters")
        for link in links.links.values {
            link.announce(document)
            link.sendOperations(operations, of: document)
        }
        return (document, true)
    }

    /// The local document a peer's document `uri` with `id` maps to, created when new. Two
    /// documents created independently under one name are kept apart: the peer's is stored as
    /// `uri#id` (protocol/peer.md), never merged into ours.
    /// `theirsIsEmpty`: the peer listed its copy with no edits (an editor there just opened the
    /// name). Two such copies settle on the smaller ID; an empty copy here joins any other.
    /// Nil: ignore the peer's copy (it is empty and will join ours).
    func documentForPeer(uri: String, id: UInt64, from link: any PeerEndpoint, theirsIsEmpty: Bool = false) -> SharedDocument? {
        var name = uri
        if let existing = documents[uri] {
            if existing.id == id {
                if let holder = link.peerReplica, existing.sharing.holders[holder] == nil { markShared(existing, holder: holder) }
                return existing
            }
            if existing.isPristine, !theirsIsEmpty || id < existing.id {
                // An editor opened the name before the peer's copy arrived: it joins the peer's
                // document instead of starting a second one (its view is empty either way).
                logger.info("peer link \(link.id): \(uri) here was empty and new; it becomes the peer's document")
                store?.discard(documentID: existing.id)
                let joined = SharedDocument(uri: uri, id: id, text: ReplicatingText(replica: replica))
                joined.selections = existing.selections
                add(joined)
                store?.create(uri: uri, id: id, initial: [])
                // The views of it go on in the joined document's log (both are empty here).
                for session in sessions.inOrder {
                    if let view = session.view(of: uri) { views.log(.opened(view: view.id), of: joined) }
                }
                _ = views.dormantViews.removeAll(of: existing.id)
                markShared(joined, holder: link.peerReplica)
                return joined
            }
            if theirsIsEmpty { return nil }
            name = "\(uri)#\(String(id, radix: 16))"
            if let renamed = documents[name] { return renamed }
            logger.warning("peer link \(link.id): document \(uri) exists here with another history; keeping the peer's as \(name)")
            for session in sessions.sessions.values {
                session.sendDocumentForked(uri: uri, copy: name, user: link.peerUser, address: link.address)
            }
        }
        let document = SharedDocument(uri: name, id: id, text: ReplicatingText(replica: replica))
        add(document)
        store?.create(uri: name, id: id, initial: [])
        markShared(document, holder: link.peerReplica)
        return document
    }

    /// Notes that the peer daemon `holder` now holds `document`: from now on its tombstones go
    /// only when a stability round reaches every holder (protocol/decisions/tombstones.md).
    /// `change` edits the rest of its sharing record first; the record is written once, if it
    /// changed.
    func markShared(_ document: SharedDocument, holder: ReplicaID?, change: (inout DocumentSharing) -> Void = { _ in }) {
        let before = document.sharing
        change(&document.sharing)
        if let holder { document.sharing.heard(from: holder, at: clock.wall()) }
        guard !document.everShared || document.sharing != before else { return }
        document.everShared = true
        store?.recordSharing(document.sharing, forDocument: document.id)
    }

    /// Stops holding `going` for good (deleted files' documents every holder saw deleted,
    /// `DocumentForgetter`): each leaves the registry, its scope's counts (`usage`) and the
    /// daemon-wide count, and its store files go (`DocumentStore.forget`, crash-safe). Returns
    /// those forgotten; one whose files the store cannot remove now (still in a pack) stays held,
    /// changed in nothing, and the caller tries it again later.
    func forget(_ going: [SharedDocument]) -> [SharedDocument] {
        let held = going.filter { documents[$0.uri] === $0 }
        let removed = store.map { $0.forget(documentIDs: held.map(\.id)) }
        let forgotten = held.filter { removed?.contains($0.id) ?? true }
        for document in forgotten {
            documents[document.uri] = nil
            document.changes = nil   // a round finishing later must not count it again
            usage.forget(uri: document.uri)
            _ = views.dormantViews.removeAll(of: document.id)
        }
        return forgotten
    }

    /// Records `document`'s sharing after a change made in place.
    func recordSharing(of document: SharedDocument) {
        store?.recordSharing(document.sharing, forDocument: document.id)
    }

    /// A link to `holder` closed: the last time this daemon was linked with it (the horizon
    /// counts from here), for every document it holds.
    func lastLinked(with holder: ReplicaID) {
        for document in documents.values where document.sharing.holders[holder] != nil { markShared(document, holder: holder) }
    }

    /// `document/list`: every document with its size and how many sessions show it.
    var documentList: [ListDocumentsRequest.Entry] {
        documents.values.sorted { $0.uri < $1.uri }.map { document in
            ListDocumentsRequest.Entry(uri: document.uri, lines: document.text.lineCount, characters: document.text.count,
                                       openInSessions: sessions.openCount(of: document.uri))
        }
    }
}
