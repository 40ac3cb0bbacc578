import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// Runs stability rounds (`StabilityRounds` says what they establish): starts them, answers and
/// forwards wave messages, retires holders away past the horizon, and drops the tombstones a
/// successful round covers. May call: the documents, the editors' views, the peer links, the
/// view keeper and the tombstone policy.
final class StabilityService {
    /// Rounds under way or recently finished.
    let stabilityRounds: StabilityRounds
    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let replica: ReplicaID
    private let clock: DaemonClock
    private unowned let documents: DocumentRegistry
    private unowned let sessions: SessionRegistry
    private unowned let peerLinks: PeerLinks
    private unowned let views: ViewKeeper
    private unowned let tombstones: TombstonePolicy
    /// Whether the document named `uri` is a file's that this daemon's project tree holds
    /// deleted (`DeletedFiles.isDeletedFile`): a round reaching a daemon that no longer holds it
    /// is answered for it then (it forgot it, and takes no copy of it again).
    var isDeletedFile: (String) -> Bool = { _ in false }
    /// Why this daemon still needs `document` (`DocumentForgetter.reasonToKeep`), nil when it
    /// does not: a forget round fails here with this reason.
    var reasonToKeep: (SharedDocument) -> String? = { _ in "nothing here forgets documents" }
    /// A forget round started here succeeded for `document` (`DocumentForgetter.roundSucceeded`).
    var forgetRoundSucceeded: (SharedDocument) -> Void = { _ in }

    init(rounds: StabilityRounds, configuration: DaemonConfiguration, logger: Logger, replica: ReplicaID, clock: DaemonClock,
         documents: DocumentRegistry, sessions: SessionRegistry, links: PeerLinks, views: ViewKeeper, tombstones: TombstonePolicy) {
        self.stabilityRounds = rounds
        self.configuration = configuration
        self.logger = logger
        self.replica = replica
        self.clock = clock
        self.documents = documents
        self.sessions = sessions
        self.peerLinks = links
        self.views = views
        self.tombstones = tombstones
    }

    private var links: [Int: any PeerEndpoint] { peerLinks.links }

    /// Starts a stability round for `document` (shared with peers, holding tombstones; a forget
    /// round: whose file is deleted) unless one of this daemon's rounds for it is under way.
    /// Returns whether one started.
    @discardableResult
    func startRound(_ document: SharedDocument, retiring: Set<ReplicaID> = [], forget: Bool = false) -> Bool {
        // Only the links of the document's scope take part (the others never carry it).
        let established = links.values.filter { $0.carries(document.uri) }
        guard document.everShared, !established.isEmpty,
              !stabilityRounds.active.values.contains(where: { $0.document === document && $0.parent == nil }) else { return false }
        let candidates = forget ? [] : document.text.scalars.removedIDs
        guard forget || !candidates.isEmpty else { return false }
        let key = StabilityRounds.Key(document: document.id, round: "\(replica.rawValue):\(stabilityRounds.nextRound)")
        stabilityRounds.nextRound += 1
        let round = StabilityRounds.Round(document: document, parent: nil, waiting: Set(established.map(\.id)),
                                          removed: candidates, candidates: candidates, retiring: retiring, forget: forget)
        if !retiring.isEmpty { round.retiredContacts = retire(retiring, of: document, by: key.round) }
        stabilityRounds.active[key] = round
        for link in established { link.sendStability(ask(key, document, retiring: retiring, forget: forget)) }
        let kind = (retiring.isEmpty ? "" : "retiring ") + (forget ? "forget" : "stability")
        logger.info("document \(document.uri): \(kind) round \(key.round) started over \(established.count) links")
        return true
    }

    private func ask(_ key: StabilityRounds.Key, _ document: SharedDocument, retiring: Set<ReplicaID>, forget: Bool) -> JSONValue {
        var message: [String: JSONValue] = ["uri": .string(document.uri), "id": .string(String(document.id)), "round": .string(key.round), "phase": "ask"]
        if !retiring.isEmpty { message["retire"] = Self.json(replicas: retiring) }
        if forget { message["forget"] = true }
        return .object(message)
    }

    /// Replica IDs as JSON: an array of decimal strings.
    private static func json(replicas: Set<ReplicaID>) -> JSONValue {
        .array(replicas.map { .string(String($0.rawValue)) })
    }

    /// Retires `holders` of `document` by round `round`: they are no longer holders, and their
    /// copies must rebase onto a state before operations flow again.
    @discardableResult
    private func retire(_ holders: Set<ReplicaID>, of document: SharedDocument, by round: String) -> [ReplicaID: Double] {
        var contacts: [ReplicaID: Double] = [:]
        for holder in holders {
            contacts[holder] = document.sharing.holders[holder] ?? 0
            document.sharing.holders[holder] = nil
            document.sharing.retired[holder] = round
        }
        document.sharing.epochs.insert(round)
        documents.recordSharing(of: document)
        logger.info("document \(document.uri): holders \(holders.map { String($0.rawValue) }.sorted().joined(separator: ", ")) retired by round \(round)")
        return contacts
    }

    /// Takes back what `round` retired here, when this daemon learns that the round failed.
    private func unretire(_ round: StabilityRounds.Round, by roundID: String) {
        guard !round.retiredContacts.isEmpty else { return }
        let document = round.document
        for (holder, seen) in round.retiredContacts where document.sharing.retired[holder] == roundID {
            document.sharing.retired[holder] = nil
            document.sharing.holders[holder] = seen
        }
        document.sharing.epochs.remove(roundID)
        documents.recordSharing(of: document)
    }

    /// Why this daemon cannot retire `holders` of `document` (it was linked with one within the
    /// horizon, or is now), or nil.
    private func reasonToKeep(_ holders: Set<ReplicaID>, of document: SharedDocument) -> String? {
        for holder in holders {
            if links.values.contains(where: { $0.isEstablished && $0.peerReplica == holder }) {
                return "holder \(holder.rawValue) is linked with replica \(replica.rawValue) now"
            }
            if let seen = document.sharing.holders[holder], clock.wall() - seen < configuration.holderHorizon {
                return "replica \(replica.rawValue) was linked with holder \(holder.rawValue) within the horizon"
            }
        }
        return nil
    }

    /// A wave message from `link`.
    func receive(_ message: StabilityMessage, from link: any PeerEndpoint) {
        let (uri, id, round, phase) = (message.uri, message.documentID, message.round, message.phase)
        let key = StabilityRounds.Key(document: id, round: round)
        // A round under way here whose document was forgotten meanwhile (a forget round of this
        // daemon's own succeeded first) still takes its answers: else it would stay under way for
        // good, and the round it relays would never finish at its initiator.
        let underWay = stabilityRounds.active[key].map(\.document).flatMap { $0.uri == uri ? $0 : nil }
        guard let document = documents.document(uri: uri, id: id) ?? underWay else {
            guard phase == .ask else { return }
            if isDeletedFile(uri), documents.document(uri) == nil {
                // Forgotten here (or never taken: its file was deleted already), and no copy of
                // it is taken again while its file stays deleted: nothing here can still send an
                // operation of it, or need one.
                link.sendStability(echo(key, uri: uri, failure: nil, reached: [replica]))
            } else {
                link.sendStability(echo(key, uri: uri, failure: "document \(uri) is not held by replica \(replica.rawValue) yet"))
            }
            return
        }
        if phase == .echo {
            guard let active = stabilityRounds.active[key] else { return }
            if !message.ok, active.failure == nil { active.failure = message.reason ?? "a peer refused" }
            active.reached.formUnion(message.reached)
            let now = clock.wall()
            active.heard(of: message.holders.mapValues { Swift.min($0, now) })
            active.waiting.remove(link.id)
            finishRound(key)
            return
        }
        if let active = stabilityRounds.active[key] {
            // The wave reached this daemon before: this ask is that link's wave message.
            active.waiting.remove(link.id)
            finishRound(key)
        } else if stabilityRounds.isFinished(key) {
            link.sendStability(echo(key, uri: uri, failure: nil))
        } else if stabilityRounds.activeCount(of: document) >= StabilityRounds.maximumActivePerDocument {
            link.sendStability(echo(key, uri: uri, failure: "too many stability rounds of \(uri) under way on replica \(replica.rawValue)"))
        } else if stabilityRounds.active.count >= stabilityRounds.maximumActive {
            link.sendStability(echo(key, uri: uri, failure: "too many stability rounds under way on replica \(replica.rawValue)"))
        } else {
            let retiring = message.retire
            let others = links.values.filter { $0.carries(uri) && $0 !== link }
            let round = StabilityRounds.Round(document: document, parent: link.id, waiting: Set(others.map(\.id)),
                                              removed: message.forget ? [] : document.text.scalars.removedIDs, candidates: [],
                                              retiring: retiring, forget: message.forget)
            stabilityRounds.active[key] = round
            if !retiring.isEmpty {
                // Retired before answering: from now on this daemon takes nothing from them.
                if let reason = reasonToKeep(retiring, of: document) {
                    round.failure = reason
                } else {
                    round.retiredContacts = retire(retiring, of: document, by: key.round)
                }
            }
            for other in others { other.sendStability(ask(key, document, retiring: retiring, forget: message.forget)) }
            finishRound(key)
        }
    }

    private func echo(_ key: StabilityRounds.Key, uri: String, failure: String?, reached: Set<ReplicaID> = [], holders: [ReplicaID: Double] = [:]) -> JSONValue {
        var message: [String: JSONValue] = [
            "uri": .string(uri), "id": .string(String(key.document)), "round": .string(key.round), "phase": "echo", "ok": .bool(failure == nil),
            "reached": Self.json(replicas: reached), "holders": DocumentSharing.json(holderTimes: holders),
        ]
        if let failure { message["reason"] = .string(failure) }
        return .object(message)
    }

    /// Whether an editor view or the file base of `document` on this daemon still shows a
    /// character in `removed`: its next edit may be anchored to it.
    private func copiesShow(_ removed: ElementIDRangeSet, in document: SharedDocument) -> Bool {
        for session in sessions.sessions.values {
            if let view = session.view(of: document.uri), removed.intersects(view.referencedIDs) { return true }
        }
        if let base = document.file?.base, removed.intersects(base.scalars.visibleIDs) { return true }
        return false
    }

    /// Completes round `key` here once every link has answered and the local copies caught up.
    private func finishRound(_ key: StabilityRounds.Key) {
        guard let round = stabilityRounds.active[key], round.waiting.isEmpty else { return }
        if round.forget {
            // No patience: an editor that shows a deleted file's document may keep it for long;
            // the next sweep asks again (`DocumentForgetter`).
            if round.failure == nil, let reason = reasonToKeep(round.document) {
                round.failure = "replica \(replica.rawValue) still needs it: \(reason)"
            }
        } else if round.failure == nil, copiesShow(round.removed, in: round.document) {
            guard round.age >= StabilityRounds.patienceTicks else { return }   // looked at again later
            round.failure = "an editor view or file base on replica \(replica.rawValue) still shows removed text"
        }
        round.reached.insert(replica)
        round.heard(of: round.document.sharing.holders)
        stabilityRounds.markFinished(key)
        if round.failure != nil { unretire(round, by: key.round) }
        let document = round.document
        if let parent = round.parent {
            links[parent]?.sendStability(echo(key, uri: document.uri, failure: round.failure, reached: round.reached, holders: round.holders))
            return
        }
        let unreached = Set(round.holders.keys).subtracting(round.reached).subtracting(document.sharing.retired.keys)
        let now = clock.wall()
        if let failure = round.failure {
            logger.info("document \(document.uri): stability round \(key.round) failed: \(failure)")
        } else if !unreached.isEmpty {
            let names = unreached.map { String($0.rawValue) }.sorted().joined(separator: ", ")
            if round.retiring.isEmpty, unreached.allSatisfy({ now - (round.holders[$0] ?? 0) >= configuration.holderHorizon }) {
                logger.info("document \(document.uri): stability round \(key.round) missed only holders away past the horizon (\(names)); retiring them")
                startRound(document, retiring: unreached, forget: round.forget)
            } else {
                logger.info("document \(document.uri): stability round \(key.round) did not reach holders \(names)")
            }
        } else if round.forget {
            logger.info("document \(document.uri): forget round \(key.round) reached \(round.reached.count) daemons; every holder saw its file deleted")
            forgetRoundSucceeded(document)
        } else {
            // Every copy drops these now: a kept view of an editor that went away and still shows
            // some could only be resumed with edits anchored to them, which no copy could place.
            // Its texts are kept: its editor's reopen merges as text against what it showed.
            views.detachDormantViews(of: document) { round.removed.intersects($0.referencedIDs) }
            let dropped = document.dropTombstones(in: round.candidates, keeping: tombstones.localReferences(of: document))
            logger.info("document \(document.uri): stability round \(key.round) reached \(round.reached.count) daemons; dropped \(dropped) removed characters")
        }
    }

    /// Rounds waiting for editors get older with each heartbeat tick; every waiting round is
    /// looked at again.
    func tick() {
        for (key, round) in stabilityRounds.active {
            round.age += 1
            finishRound(key)
        }
    }

    /// Looks again at rounds that wait only for local copies to catch up (after editor edits;
    /// file bases are looked at again on the heartbeat tick).
    func recheck() {
        for (key, round) in stabilityRounds.active where round.waiting.isEmpty { finishRound(key) }
    }

    /// A link closed: rounds waiting on it fail; rounds whose parent it was can no longer report.
    func linkClosed(_ link: any PeerEndpoint) {
        for (key, round) in stabilityRounds.active {
            if round.parent == link.id {
                stabilityRounds.markFinished(key)
            } else if round.waiting.remove(link.id) != nil {
                if round.failure == nil { round.failure = "a peer link closed during the round" }
                finishRound(key)
            }
        }
    }
}

extension StabilityService {
    /// At the end of a read: looks again at rounds waiting for editors, if an editor edit
    /// arrived since the last look.
    func recheckIfEditorsMoved() {
        if stabilityRounds.editorsMoved, !stabilityRounds.active.isEmpty { recheck() }
        stabilityRounds.editorsMoved = false
    }
}
