import QuireProtocol

/// One link's bookkeeping for digest rounds (protocol/peer.md, *Repair*): which documents to ask
/// about at the next tick, which answers and wants the peer may send, how many of its asks to
/// answer, and the counts of operations and state frames each way that tell whether a difference
/// between two digests is real or only frames still on the way.
///
/// Guarantees:
/// 1. A document is asked about at a tick only if it changed since it was last asked about, or
///    its last round did not end in agreement; at most `maximumAsksPerTick` asks go out per tick.
/// 2. A document whose rounds keep ending without agreement (or without any answer) is asked
///    about less and less often: after n such rounds in a row, every 2^(n-1) ticks, at most every
///    `maximumBackoffTicks` ticks, until a round agrees.
/// 3. At most `maximumAnswersPerTick` of the peer's asks are answered per tick, at most
///    `maximumAsksPerDocumentPerTick` per document; the rest are dropped (the peer asks again).
/// 4. An answer is taken only for an ask sent and not yet answered, and a want only after an
///    answer that carried a version vector: the peer cannot make this daemon do work it did not
///    offer to do.
/// Ticks count calls to `startTick()`. No arithmetic here traps: the 64-bit tick and frame counts
/// wrap (which takes longer than any link lives), the per-tick counts stop at their budgets.
struct DigestExchange {
    static let maximumAsksPerTick = 256
    static let maximumAnswersPerTick = 2 * maximumAsksPerTick
    static let maximumAsksPerDocumentPerTick = 2
    static let maximumBackoffTicks: UInt64 = 64

    /// Operations and state frames sent on this link, and received from it.
    private(set) var framesSent: UInt64 = 0
    private(set) var framesReceived: UInt64 = 0
    private(set) var tick: UInt64 = 0

    /// Where the rounds about one document stand, on this link.
    private struct Rounds {
        /// The document's revision when it was last asked about.
        var askedRevision: UInt64?
        var awaitingAnswer = false
        /// The last round did not end in agreement: ask again even if nothing changed.
        var again = false
        /// Rounds in a row that ended without agreement.
        var failures = 0
        /// The first tick it may be asked about again.
        var notBefore: UInt64 = 0
    }

    /// By the document's name on this daemon.
    private var rounds: [String: Rounds] = [:]
    /// Documents an answer with a version vector was sent for: the peer's want is expected.
    private var expectingWant: Set<String> = []
    private var answeredThisTick = 0
    private var asksThisTick: [String: Int] = [:]
    /// Asks of the peer dropped this tick (for one log line per tick).
    private(set) var droppedThisTick = 0

    /// Counts a frame sent on the link.
    mutating func noteSent(_ frame: PeerFrame) {
        if Self.changesDocuments(frame) { framesSent &+= 1 }
    }

    /// Counts a frame received on the link.
    mutating func noteReceived(_ frame: PeerFrame) {
        if Self.changesDocuments(frame) { framesReceived &+= 1 }
    }

    /// The frames that carry document content: a digest taken with a frame of these still on the
    /// way may differ for no other reason.
    private static func changesDocuments(_ frame: PeerFrame) -> Bool {
        switch frame {
        case .operations, .state: return true
        default: return false
        }
    }

    /// A new tick: the answer budgets start again.
    mutating func startTick() {
        tick &+= 1
        answeredThisTick = 0
        asksThisTick.removeAll(keepingCapacity: true)
        droppedThisTick = 0
    }

    /// Whether to ask about document `uri`, now at `revision`, at this tick; records the ask when so.
    mutating func shouldAsk(uri: String, revision: UInt64) -> Bool {
        var state = rounds[uri] ?? Rounds()
        guard tick >= state.notBefore, state.askedRevision != revision || state.again || state.awaitingAnswer else { return false }
        // The previous ask was never answered: the peer does not have it, or dropped the ask.
        if state.awaitingAnswer { state.failures = min(state.failures + 1, 64) }
        state.askedRevision = revision
        state.awaitingAnswer = true
        state.again = false
        state.notBefore = tick &+ Self.backoff(afterFailures: state.failures)
        rounds[uri] = state
        return true
    }

    /// Ticks to wait before asking again after `failures` rounds in a row without agreement.
    static func backoff(afterFailures failures: Int) -> UInt64 {
        failures <= 1 ? 1 : min(UInt64(1) << UInt64(min(failures - 1, 6)), maximumBackoffTicks)
    }

    /// Whether an ask of the peer about `uri` is answered (within the budgets); counts it.
    mutating func mayAnswer(uri: String) -> Bool {
        let forDocument = asksThisTick[uri] ?? 0
        guard answeredThisTick < Self.maximumAnswersPerTick, forDocument < Self.maximumAsksPerDocumentPerTick else {
            droppedThisTick &+= 1
            return false
        }
        answeredThisTick += 1
        asksThisTick[uri] = forDocument + 1
        return true
    }

    /// Whether an answer about `uri` was expected (an ask of ours not yet answered); takes it.
    mutating func takeAnswer(uri: String) -> Bool {
        guard rounds[uri]?.awaitingAnswer == true else { return false }
        rounds[uri]?.awaitingAnswer = false
        return true
    }

    /// The round about `uri` ended in agreement.
    mutating func agreed(uri: String) {
        rounds[uri]?.failures = 0
        rounds[uri]?.again = false
        rounds[uri]?.notBefore = 0
    }

    /// The round about `uri` ended without agreement: `repaired` when what differed was sent
    /// both ways, else (frames were still on the way) nothing was; ask again at a later tick.
    mutating func differed(uri: String, repaired: Bool) {
        guard var state = rounds[uri] else { return }
        if repaired { state.failures = min(state.failures + 1, 64) }
        state.again = true
        state.notBefore = tick &+ Self.backoff(afterFailures: state.failures)
        rounds[uri] = state
    }

    /// An answer with a version vector about `uri` went out: the peer's want may follow.
    mutating func expectWant(uri: String) {
        expectingWant.insert(uri)
    }

    /// Whether a want about `uri` was expected; takes it.
    mutating func takeWant(uri: String) -> Bool {
        expectingWant.remove(uri) != nil
    }
}
