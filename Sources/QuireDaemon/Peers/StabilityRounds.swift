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
        var reached: Set<ReplicaID> = []
        /// Holders known to the daemons reached, with when each was last linked with.
        var holders: [ReplicaID: Double] = [:]
        var failure: String?
        var age = 0
        /// When this daemon had last linked with each holder it retired for this round.
        var retiredContacts: [ReplicaID: Double] = [:]

        init(document: SharedDocument, parent: Int?, waiting: Set<Int>, removed: [ElementIDRange], candidates: [ElementIDRange],
             retiring: Set<ReplicaID> = []) {
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

extension Daemon {
    /// Starts a stability round for `document` (shared with peers, holding tombstones) unless
    /// one of this daemon's rounds for it is under way. Returns whether one started.
    @discardableResult
    func startStabilityRound(_ document: SharedDocument, retiring: Set<ReplicaID> = []) -> Bool {
        let established = links.values.filter { $0.state == .established }
        guard document.everShared, !established.isEmpty,
              !stabilityRounds.active.values.contains(where: { $0.document === document && $0.parent == nil }) else { return false }
        let candidates = document.text.scalars.removedIDs
        guard !candidates.isEmpty else { return false }
        let key = StabilityRounds.Key(document: document.id, round: "\(replica.rawValue):\(stabilityRounds.nextRound)")
        stabilityRounds.nextRound += 1
        let round = StabilityRounds.Round(document: document, parent: nil, waiting: Set(established.map(\.id)),
                                          removed: candidates, candidates: candidates, retiring: retiring)
        if !retiring.isEmpty { round.retiredContacts = retire(retiring, of: document, by: key.round) }
        stabilityRounds.active[key] = round
        for link in established { link.sendStability(ask(key, document, retiring: retiring)) }
        logger.info("document \(document.uri): \(retiring.isEmpty ? "stability" : "retiring") round \(key.round) started over \(established.count) links")
        return true
    }

    private func ask(_ key: StabilityRounds.Key, _ document: SharedDocument, retiring: Set<ReplicaID>) -> JSONValue {
        var message: [String: JSONValue] = ["uri": .string(document.uri), "id": .string(String(document.id)), "round": .string(key.round), "phase": "ask"]
        if !retiring.isEmpty { message["retire"] = Self.json(replicas: retiring) }
        return .object(message)
    }

    /// Replica IDs as JSON: an array of decimal strings.
    private static func json(replicas: Set<ReplicaID>) -> JSONValue {
        .array(replicas.map { .string(String($0.rawValue)) })
    }

    /// The replica IDs in `json` (see `json(replicas:)`); entries that are not such are left out.
    private static func replicas(in json: JSONValue?) -> Set<ReplicaID> {
        Set((json?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(UInt64.init).map(ReplicaID.init) })
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
        recordSharing(of: document)
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
        recordSharing(of: document)
    }

    /// Why this daemon cannot retire `holders` of `document` (it was linked with one within the
    /// horizon, or is now), or nil.
    private func reasonToKeep(_ holders: Set<ReplicaID>, of document: SharedDocument) -> String? {
        for holder in holders {
            if links.values.contains(where: { $0.state == .established && $0.peerReplica == holder }) {
                return "holder \(holder.rawValue) is linked with replica \(replica.rawValue) now"
            }
            if let seen = document.sharing.holders[holder], clock() - seen < configuration.holderHorizon {
                return "replica \(replica.rawValue) was linked with holder \(holder.rawValue) within the horizon"
            }
        }
        return nil
    }

    /// A wave message from `link`.
    func receiveStability(_ message: JSONValue, from link: PeerLink) {
        guard let uri = message["uri"]?.stringValue, let idText = message["id"]?.stringValue, let id = UInt64(idText),
              let round = message["round"]?.stringValue, let phase = message["phase"]?.stringValue, phase == "ask" || phase == "echo"
        else { return link.cut("malformed stability message") }
        let key = StabilityRounds.Key(document: id, round: round)
        guard let document = document(uri: uri, id: id) else {
            if phase == "ask" { link.sendStability(echo(key, uri: uri, failure: "document \(uri) is not held by replica \(replica.rawValue) yet")) }
            return
        }
        if phase == "echo" {
            guard let active = stabilityRounds.active[key] else { return }
            if message["ok"] != .bool(true), active.failure == nil {
                active.failure = message["reason"]?.stringValue.map { PeerLink.displayName($0, limit: PeerLink.maximumReasonLength) } ?? "a peer refused"
            }
            active.reached.formUnion(Self.replicas(in: message["reached"]))
            active.heard(of: DocumentSharing.holderTimes(message["holders"], notAfter: clock()))
            active.waiting.remove(link.id)
            finishStabilityRound(key)
            return
        }
        if let active = stabilityRounds.active[key] {
            // The wave reached this daemon before: this ask is that link's wave message.
            active.waiting.remove(link.id)
            finishStabilityRound(key)
        } else if stabilityRounds.isFinished(key) {
            link.sendStability(echo(key, uri: uri, failure: nil))
        } else if stabilityRounds.activeCount(of: document) >= StabilityRounds.maximumActivePerDocument {
            link.sendStability(echo(key, uri: uri, failure: "too many stability rounds of \(uri) under way on replica \(replica.rawValue)"))
        } else {
            let retiring = Self.replicas(in: message["retire"])
            let others = links.values.filter { $0.state == .established && $0 !== link }
            let round = StabilityRounds.Round(document: document, parent: link.id, waiting: Set(others.map(\.id)),
                                              removed: document.text.scalars.removedIDs, candidates: [], retiring: retiring)
            stabilityRounds.active[key] = round
            if !retiring.isEmpty {
                // Retired before answering: from now on this daemon takes nothing from them.
                if let reason = reasonToKeep(retiring, of: document) {
                    round.failure = reason
                } else {
                    round.retiredContacts = retire(retiring, of: document, by: key.round)
                }
            }
            for other in others { other.sendStability(ask(key, document, retiring: retiring)) }
            finishStabilityRound(key)
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
        for session in sessions.values {
            if let view = session.view(of: document.uri), removed.intersects(view.referencedIDs) { return true }
        }
        if let base = document.file?.base, removed.intersects(base.scalars.visibleIDs) { return true }
        return false
    }

    /// Completes round `key` here once every link has answered and the local copies caught up.
    func finishStabilityRound(_ key: StabilityRounds.Key) {
        guard let round = stabilityRounds.active[key], round.waiting.isEmpty else { return }
        if round.failure == nil, copiesShow(round.removed, in: round.document) {
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
        let now = clock()
        if let failure = round.failure {
            logger.info("document \(document.uri): stability round \(key.round) failed: \(failure)")
        } else if !unreached.isEmpty {
            let names = unreached.map { String($0.rawValue) }.sorted().joined(separator: ", ")
            if round.retiring.isEmpty, unreached.allSatisfy({ now - (round.holders[$0] ?? 0) >= configuration.holderHorizon }) {
                logger.info("document \(document.uri): stability round \(key.round) missed only holders away past the horizon (\(names)); retiring them")
                startStabilityRound(document, retiring: unreached)
            } else {
                logger.info("document \(document.uri): stability round \(key.round) did not reach holders \(names)")
            }
        } else {
            // Every copy drops these now: a kept view of an editor that went away and still shows
            // some could only be resumed with edits anchored to them, which no copy could place.
            // Its texts are kept: its editor's reopen merges as text against what it showed.
            detachDormantViews(of: document) { round.removed.intersects($0.referencedIDs) }
            let dropped = document.dropTombstones(in: round.candidates, keeping: localReferences(of: document))
            logger.info("document \(document.uri): stability round \(key.round) reached \(round.reached.count) daemons; dropped \(dropped) removed characters")
        }
    }

    /// Rounds waiting for editors get older with each heartbeat tick; every waiting round is
    /// looked at again.
    func tickStabilityRounds() {
        for (key, round) in stabilityRounds.active {
            round.age += 1
            finishStabilityRound(key)
        }
    }

    /// Looks again at rounds that wait only for local copies to catch up (after editor edits;
    /// file bases are looked at again on the heartbeat tick).
    func recheckStabilityRounds() {
        for (key, round) in stabilityRounds.active where round.waiting.isEmpty { finishStabilityRound(key) }
    }

    /// A link closed: rounds waiting on it fail; rounds whose parent it was can no longer report.
    func stabilityLinkClosed(_ link: PeerLink) {
        for (key, round) in stabilityRounds.active {
            if round.parent == link.id {
                stabilityRounds.markFinished(key)
            } else if round.waiting.remove(link.id) != nil {
                if round.failure == nil { round.failure = "a peer link closed during the round" }
                finishStabilityRound(key)
            }
        }
    }
}
