import JSON
import QuireProtocol
import ReplicatingTypes

/// Stability rounds (protocol/peer.md, "Dropping tombstones"): an echo wave over the peer links
/// that establishes, for one document, that every daemon holding it has seen the removals the
/// initiator had when the round started, that no editor view or file base on any of them still
/// shows those characters, and that nothing anchored to them is still in flight. Only then does
/// the initiator drop those tombstones.
///
/// The wave: the initiator sends `ask` on every link. A daemon's first `ask` makes that link its
/// parent; it forwards `ask` on its other links. Once a wave message (an `ask` or an `echo`) came
/// back on every other link, and its own views and file base no longer show what it had removed
/// when the round reached it, it sends `echo` to its parent with what it learned: the daemons
/// reached, the holders they know of, and any reason the round fails. Links deliver in order and a
/// daemon relays every new operation at once, so when a link's wave message arrives, everything
/// sent on that link before it has arrived too. The initiator drops the tombstones only if every
/// holder anyone knows was reached.
///
/// Holders not linked with for longer than the horizon: when they are all a round missed, the
/// initiator starts a *retiring round* naming them. Each daemon it reaches retires them for the
/// document (no operations to or from them, only a state to rebase onto, see `PeerLink`) before
/// it answers, unless it was linked with one of them within the horizon, which fails the round.
///
/// Forget rounds (`forget` in the ask) are the same wave for a document whose file the project's
/// tree deleted: each daemon reached answers only once its own tree holds the file deleted and
/// nothing of it on disk, no editor shows the document and no editor that went away may reopen it
/// (`DocumentForgetter.reasonToKeep`); otherwise the round fails at once. A daemon that no longer
/// holds the document answers for it when its tree holds the file deleted (it forgot it). Only
/// the initiator forgets the document, once every holder anyone knows was reached.
final class StabilityRounds {
    struct Key: Hashable {
        let document: UInt64
        let round: String
    }

    final class Round {
        let document: SharedDocument
        /// The link the first `ask` came on; nil on the daemon that started the round.
        let parent: Int?
        /// Links a wave message is still due from.
        var waiting: Set<Int>
        /// What was removed here when the round reached this daemon.
        let removed: ElementIDRangeSet
        /// On the initiator: the tombstones it may drop if the round succeeds.
        let candidates: [ElementIDRange]
        /// Holders this round retires (a retiring round), or none.
        let retiring: Set<ReplicaID>
        /// A forget round: what it establishes is that every holder saw the document's file
        /// deleted and no copy still needs the document (`DocumentForgetter`); it drops nothing.
        let forget: Bool
        var reached: Set<ReplicaID> = []
        /// Holders known to the daemons reached, with when each was last linked with.
        var holders: [ReplicaID: Double] = [:]
        var failure: String?
        var age = 0
        /// When this daemon had last linked with each holder it retired for this round.
        var retiredContacts: [ReplicaID: Double] = [:]

        init(document: SharedDocument, parent: Int?, waiting: Set<Int>, removed: [ElementIDRange], candidates: [ElementIDRange],
             retiring: Set<ReplicaID> = [], forget: Bool = false) {
            self.forget = forget
            self.document = document
            self.parent = parent
            self.waiting = waiting
            self.removed = ElementIDRangeSet(removed)
            self.candidates = candidates
            self.retiring = retiring
        }

        func heard(of holders: [ReplicaID: Double]) {
            for (holder, seconds) in holders { self.holders[holder] = Swift.max(self.holders[holder] ?? 0, seconds) }
        }
    }

    /// Heartbeat ticks a round may wait for editors to catch up before it fails.
    static let patienceTicks = 6
    /// Rounds one document may have under way here at once; more (a peer flooding asks) are
    /// answered with a failure at once, since each holds a copy of the document's removed IDs.
    static let maximumActivePerDocument = 8
    /// Rounds under way here at once across documents: 8 in each of 50,000 documents would be
    /// 400,000 copies of removed IDs. More are answered with a failure (the initiator retries later).
    var maximumActive = 4_096

    var active: [Key: Round] = [:]
    /// Whether an editor edit arrived since rounds waiting on views were last looked at (views
    /// catch up only then; the look costs O(text) per view).
    var editorsMoved = false
    /// Rounds finished here (the most recent ones), so a late `ask` gets an answer at once.
    private(set) var finished: [Key] = []
    var nextRound = 1

    func markFinished(_ key: Key) {
        active[key] = nil
        finished.append(key)
        if finished.count > 256 { finished.removeFirst(finished.count - 256) }
    }

    func isFinished(_ key: Key) -> Bool { finished.contains(key) }

    /// Rounds of `document` under way here (started here or reached from a peer).
    func activeCount(of document: SharedDocument) -> Int {
        active.values.filter { $0.document === document }.count
    }
}
