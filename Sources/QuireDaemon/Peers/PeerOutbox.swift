import QuireProtocol
import ReplicatingTypes

/// What a link owes its peer of one document and sends at the pace the peer reads it: the
/// operations or the state it lacks after a handshake, a repair, or a document that arrived
/// here whole. Built when its turn comes, one frame at a time (`PeerLink+Output`), never ahead.
struct CatchUp {
    enum Kind {
        /// What a copy with vector `since` lacks: its operations (the insertions it has not seen
        /// and this copy's whole removal set), or the whole state when `theyHaveNothing` and this
        /// copy dropped tombstones (operations anchored to them could not be placed).
        /// `announceIfNothing`: with no operation to send, an announcement instead (the peer
        /// lacks the document, which is empty here).
        case lacking(since: VersionVector, theyHaveNothing: Bool, announceIfNothing: Bool)
        /// The whole state.
        case state
    }

    let document: SharedDocument
    private(set) var kind: Kind
    /// Once its turn came: the operations to send, and how many were sent.
    var operations: [ReplicatingArrayOperation<Unicode.Scalar>]?
    var sent = 0

    init(_ document: SharedDocument, _ kind: Kind) {
        self.document = document
        self.kind = kind
    }

    /// Takes in `other`, another catch-up of the same document not started either: what the
    /// two owe, sent once (what either vector lacks; the state when either is the state).
    mutating func absorb(_ other: CatchUp) {
        switch (kind, other.kind) {
        case (.state, _): return
        case (_, .state): kind = .state
        case (.lacking(let mine, let nothing, let announce), .lacking(let theirs, let otherNothing, let otherAnnounce)):
            var least: [ReplicaID: UInt64] = [:]
            for (replica, count) in mine.counts { least[replica] = Swift.min(count, theirs[replica]) }
            kind = .lacking(since: VersionVector(least), theyHaveNothing: nothing || otherNothing,
                            announceIfNothing: announce || otherAnnounce)
        }
    }
}

/// A peer link's output on its way to the transport, paced to what the peer reads
/// (protocol/peer.md, *Bounds*, output).
///
/// Model: the queue holds, in send order, what the link has not written yet: catch-up (built a
/// frame at a time when its turn comes) and the live frames sent behind it (built when sent,
/// sealed when written). In flight is what was written and the transport has not yet handed to
/// the kernel, in order, each write marked live or catch-up. A transport that does not report
/// what the kernel took (`paced` false) has nothing in flight: its writes count as taken.
///
/// Invariants:
/// 1. Between pumps the queue is empty or starts with catch-up: a live frame with nothing ahead
///    of it is written at once, and catch-up only waits for room.
/// 2. Live bytes waiting, queued or in flight, never pass the limit the link checks them
///    against (`liveWaiting`); catch-up is not counted there, as it is not written ahead of
///    the peer: only while fewer than the low-water mark of bytes are in flight, so at most
///    that plus one frame of it waits, and what is not written is not built.
/// 3. Frames are sealed as they are written, in queue order: sealing order is send order.
struct PeerOutbox {
    enum Item {
        /// A live frame's body, whether it is sealed, and its size on the wire.
        case frame(body: [UInt8], seals: Bool, bytes: Int)
        case catchUp(CatchUp)
    }

    /// Whether the transport reports what the kernel took (`took`).
    var paced = false
    private var queue: [Item] = []
    private var head = 0
    /// The sequence number of `queue[0]` (items are numbered as they are appended).
    private var base = 0
    /// Catch-up queued and not started, by document: its sequence number. A document has at
    /// most one (a second is absorbed into it), so catch-up queued is bounded by the documents.
    private var unstarted: [ObjectIdentifier: Int] = [:]
    private var inFlight: [(bytes: Int, catchUp: Bool)] = []
    private var inFlightHead = 0
    /// Wire bytes of the live frames in the queue.
    private(set) var queuedLiveBytes = 0
    /// Bytes written and not yet taken by the kernel: live, and catch-up.
    private(set) var unsentLive = 0
    private(set) var unsentCatchUp = 0

    var unsent: Int { unsentLive + unsentCatchUp }
    /// Live output waiting for the peer: queued behind catch-up, or in flight.
    var liveWaiting: Int { queuedLiveBytes + unsentLive }
    var isEmpty: Bool { head == queue.count }
    /// Items queued: live frames and catch-up.
    var count: Int { queue.count - head }
    var front: Item? { isEmpty ? nil : queue[head] }
    /// Whether catch-up is at the front of the queue: between pumps, whether any waits
    /// (invariant 1). - Complexity: O(1)
    var holdsCatchUp: Bool {
        if case .catchUp? = front { return true } else { return false }
    }

    mutating func append(_ item: Item) {
        switch item {
        case .frame(_, _, let bytes): queuedLiveBytes += bytes
        case .catchUp(let catchUp):
            let key = ObjectIdentifier(catchUp.document)
            if let number = unstarted[key], number - base >= head, number - base < queue.count,
               case .catchUp(var queued) = queue[number - base], queued.document === catchUp.document, queued.operations == nil {
                queued.absorb(catchUp)
                queue[number - base] = .catchUp(queued)
                return
            }
            unstarted[key] = base + queue.count
        }
        queue.append(item)
    }

    /// Takes the front item out. - Complexity: amortized O(1)
    @discardableResult
    mutating func popFront() -> Item? {
        guard let item = front else { return nil }
        switch item {
        case .frame(_, _, let bytes): queuedLiveBytes -= bytes
        case .catchUp(let catchUp): forgetUnstarted(catchUp, number: base + head)
        }
        head += 1
        if head == queue.count {
            base += queue.count
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= queue.count {
            base += head
            queue.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Changes the catch-up at the front (its progress); once started, a later catch-up of its
    /// document is queued after it, not absorbed.
    mutating func updateFrontCatchUp(_ body: (inout CatchUp) -> Void) {
        guard !isEmpty, case .catchUp(var catchUp) = queue[head] else { return }
        body(&catchUp)
        if catchUp.operations != nil { forgetUnstarted(catchUp, number: base + head) }
        queue[head] = .catchUp(catchUp)
    }

    private mutating func forgetUnstarted(_ catchUp: CatchUp, number: Int) {
        let key = ObjectIdentifier(catchUp.document)
        if unstarted[key] == number { unstarted[key] = nil }
    }

    /// `bytes` were written to the transport.
    mutating func wrote(_ bytes: Int, catchUp: Bool) {
        guard paced, bytes > 0 else { return }
        inFlight.append((bytes, catchUp))
        if catchUp { unsentCatchUp += bytes } else { unsentLive += bytes }
    }

    /// The transport handed `count` more bytes to the kernel (or dropped them as the stream
    /// closed), oldest first.
    mutating func took(_ count: Int) {
        var remaining = Swift.max(0, count)
        while remaining > 0, inFlightHead < inFlight.count {
            let taken = Swift.min(remaining, inFlight[inFlightHead].bytes)
            inFlight[inFlightHead].bytes -= taken
            remaining -= taken
            if inFlight[inFlightHead].catchUp { unsentCatchUp -= taken } else { unsentLive -= taken }
            if inFlight[inFlightHead].bytes == 0 { inFlightHead += 1 }
        }
        if inFlightHead == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            inFlightHead = 0
        } else if inFlightHead >= 64, inFlightHead * 2 >= inFlight.count {
            inFlight.removeFirst(inFlightHead)
            inFlightHead = 0
        }
    }

    /// Forgets everything queued (the link is going): nothing of it will be written.
    mutating func dropQueued() {
        base += queue.count
        queue.removeAll()
        head = 0
        queuedLiveBytes = 0
        unstarted.removeAll()
    }
}
