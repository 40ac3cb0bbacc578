import Logging
import ReplicatingTypes

/// Forgets the document of a deleted file once it can no longer matter (protocol/decisions/
/// project-tree.md, *Forgetting a deleted file's document*), so that a project whose files churn
/// (generated files, branch switches) does not creep up to its document quota, the daemon-wide
/// cap, its store's size and its load time.
///
/// A document may go once the project's tree holds its file deleted and nothing of the file is on
/// disk here (`DeletedFiles`), no editor shows it and no editor that went away may reopen it
/// (`reasonToKeep`), and, when a peer ever held it, a forget round (`StabilityRounds`) reached every
/// holder anyone knows of and found the same there. Then it leaves the registry and the counts and
/// its store files go, crash-safely (`DocumentRegistry.forget`, `DocumentStore.forget`). A peer's
/// copy of it is not taken again while its file stays deleted (`PeerSession`).
///
/// Guarantees: only this daemon's own tree and copies decide that a document may go here; a peer
/// can neither name a document to forget nor answer for this daemon's copies, so it cannot make it
/// forget a document whose file is not deleted in its tree. May call: the documents, the editors,
/// the view keeper and the stability rounds; the projects only through `DeletedFiles`.
final class DocumentForgetter {
    /// Documents looked at per sweep at most.
    static let sweepLimit = 4096
    /// Forget rounds this daemon keeps under way at once at most (each holds one wave).
    static let maximumRounds = 1024
    /// Sweeps after a forget round started for a document before another may start for it: the
    /// next sweep after the first round, then 2, 4 and 8 sweeps, then at most `retrySweeps` (a
    /// minute at one sweep per heartbeat). A peer that was still removing the file when the first
    /// round reached it says yes a few seconds later; a holder that is away fails every round
    /// until it comes back, and the links should not carry a round per document and heartbeat
    /// meanwhile.
    static func retryDelay(afterRounds rounds: Int) -> Int {
        rounds >= 5 ? retrySweeps : min(retrySweeps, 1 << max(rounds - 1, 0))
    }
    static let retrySweeps = 12

    private let logger: Logger
    private let replica: ReplicaID
    private unowned let documents: DocumentRegistry
    private unowned let sessions: SessionRegistry
    private unowned let views: ViewKeeper
    private unowned let stability: StabilityService
    /// The projects' side (set by the daemon).
    weak var deletedFiles: (any DeletedFiles)?
    /// Documents to forget at the next `flush` (a round succeeded, or no peer holds them).
    private var due: [SharedDocument] = []
    /// How many documents this daemon forgot since it started (for tests and status).
    private(set) var forgottenCount = 0
    /// Sweeps so far, and for each document the sweep from which its next round may start and
    /// how many rounds it had.
    private var sweeps = 0
    private var nextRound: [UInt64: (sweep: Int, rounds: Int)] = [:]

    init(logger: Logger, replica: ReplicaID, documents: DocumentRegistry, sessions: SessionRegistry, views: ViewKeeper,
         stability: StabilityService) {
        self.logger = logger
        self.replica = replica
        self.documents = documents
        self.sessions = sessions
        self.views = views
        self.stability = stability
    }

    /// Why this daemon still needs `document`, nil when it may go.
    func reasonToKeep(_ document: SharedDocument) -> String? {
        if sessions.isOpen(document) { return "an editor shows it" }
        if !views.dormantViews.views(of: document.id).isEmpty || !views.dormantViews.detachedViews(of: document.id).isEmpty {
            return "an editor that went away may reopen it"
        }
        guard let deletedFiles else { return "no project says its file is deleted" }
        return deletedFiles.reasonToKeep(document.uri)
    }

    /// Looks at the documents of deleted files: those no peer holds are forgotten now, a forget
    /// round starts for the others. Runs at every heartbeat (`Daemon.tickPeers`).
    /// - Complexity: O(deleted files of the active projects) lookups, plus O(what goes).
    func sweep() {
        guard let deletedFiles else { return }
        sweeps += 1
        var rounds = stability.stabilityRounds.active.values.filter { $0.forget && $0.parent == nil }.count
        for uri in deletedFiles.forgettableDocuments(limit: Self.sweepLimit) {
            guard let document = documents.document(uri), reasonToKeep(document) == nil else { continue }
            if document.sharing.holders.isEmpty {
                due.append(document)   // no peer holds it (never did, or all were retired)
            } else if rounds < Self.maximumRounds, nextRound[document.id].map({ $0.sweep <= sweeps }) ?? true,
                      stability.startRound(document, forget: true) {
                rounds += 1
                // A stale count starts again from the first delay.
                let last = nextRound[document.id].flatMap { isStale($0) ? nil : $0.rounds } ?? 0
                let started = last + 1
                nextRound[document.id] = (sweeps + Self.retryDelay(afterRounds: started), started)
            }
        }
        // Only stale counts go (they would start again anyway): a holder that is away keeps its
        // documents at one round per `retrySweeps`, however many they are.
        if nextRound.count > Self.sweepLimit { nextRound = nextRound.filter { !isStale($0.value) } }
        flush()
    }

    /// Whether a document's round count is stale: its next round fell due long ago (the document
    /// was kept meanwhile, say an editor showed it), so it no longer says how often it failed.
    private func isStale(_ next: (sweep: Int, rounds: Int)) -> Bool {
        sweeps - next.sweep > Self.retrySweeps
    }

    /// A forget round of `document` started here reached every holder: it goes at the next flush.
    func roundSucceeded(_ document: SharedDocument) {
        due.append(document)
    }

    /// Forgets what is due and still may go (looked at again: an editor may have opened it since).
    func flush() {
        guard !due.isEmpty else { return }
        let going = due.filter { documents.document($0.uri) === $0 && reasonToKeep($0) == nil }
        due = []
        guard !going.isEmpty else { return }
        let forgotten = documents.forget(going)
        forgottenCount += forgotten.count
        for document in forgotten { nextRound[document.id] = nil }
        for document in forgotten { logger.info("document \(document.uri): forgotten (its file is deleted and every holder saw it)") }
        if forgotten.count < going.count {
            logger.info("\(going.count - forgotten.count) documents of deleted files wait for their store files to settle before they are forgotten")
        }
    }
}
