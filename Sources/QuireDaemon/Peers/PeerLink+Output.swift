import QuireProtocol
import ReplicatingTypes

/// A link's output, paced to what the peer reads (protocol/peer.md, *Bounds*, output;
/// `PeerOutbox` holds the bookkeeping).
///
/// Live frames (edits as they are made, presence, rounds, heartbeats) go out at once, unless
/// catch-up is queued ahead of them. Catch-up (what a peer lacks after a handshake or a repair,
/// a document that arrived here whole) is built a frame at a time, and only while fewer than
/// `Configuration.catchUpLowWaterBytes` wait for the peer: a large catch-up over a slow link
/// completes, at the link's pace, with memory bounded by the low-water mark plus one frame. A
/// peer that stops reading is cut once its live output waiting passes
/// `Configuration.maximumUnsentPeerBytes` (on a later turn of the event loop, outside the write
/// that found it); catch-up not yet sent never counts against it, as it is not built.
///
/// Frames are sealed when written, in queue order, so the counter nonces follow send order.
extension PeerLink {
    /// Paces this link's output: from now on what it writes counts as waiting until the transport
    /// reports it taken (`outputTaken`); `later` runs a closure on a later turn of the link's
    /// event loop. Without this (in-process links), writes count as taken at once.
    func paceOutput(later: @escaping (@escaping () -> Void) -> Void) {
        outbox.paced = true
        self.later = later
    }

    /// The transport handed `count` bytes of this link's output to the kernel (or dropped them
    /// as the stream closed), oldest first. Once few enough wait, the next catch-up goes out (on
    /// a later turn: never inside the transport's own write).
    func outputTaken(_ count: Int) {
        outbox.took(count)
        guard state != .closed, !outputPumpScheduled, !pumpingOutput, hasCatchUpRoom, outbox.holdsCatchUp else { return }
        outputPumpScheduled = true
        later? { [weak self] in
            guard let self else { return }
            self.outputPumpScheduled = false
            self.pumpOutput()
            self.daemon.commit()   // what producing it logged (a holder noted) is durable before it goes out
        }
    }

    /// Whether output (live or catch-up) waits in the queue.
    var hasQueuedOutput: Bool { !outbox.isEmpty }

    /// Bytes written to the transport and not yet taken by the kernel (0 unless paced).
    var unsentOutputBytes: Int { outbox.unsent }

    /// Whether catch-up may be written now: few enough bytes wait for the peer.
    private var hasCatchUpRoom: Bool { outbox.unsent < daemon.configuration.catchUpLowWaterBytes }

    /// Sends one frame: sealed once the hellos were exchanged and, on the accepting side, once
    /// the connector proved the secret. Before that an accepting side sends nothing sealed (only
    /// its hello and perhaps a goodbye in the clear), so a stranger gets nothing to test guesses
    /// of the secret against. Written at once, or behind the catch-up queued before it; a
    /// goodbye goes at once, and what was queued is dropped.
    func send(_ frame: PeerFrame) {
        guard state != .closed, !outputOverflowed else { return }
        let seals = channel.sealsOutput
        if case .bye = frame { outbox.dropQueued() }
        let body = frame.body()
        let bytes = body.count + (seals ? 4 + FrameOpener.tagBytes : 4)
        guard outbox.liveWaiting + bytes <= daemon.configuration.maximumUnsentPeerBytes else { return overflowed() }
        digests.noteSent(frame)
        if outbox.isEmpty {
            write(body: body, seals: seals, catchUp: false)
        } else {
            outbox.append(.frame(body: body, seals: seals, bytes: bytes))
        }
    }

    /// Live output would pass the limit: nothing more is written, and the link is cut on a later
    /// turn (or at once without a transport that paces).
    private func overflowed() {
        outputOverflowed = true
        let waiting = outbox.liveWaiting, limit = daemon.configuration.maximumUnsentPeerBytes
        let cutNow: () -> Void = { [weak self] in
            self?.cut("the peer does not read: \(waiting) bytes wait for it, and more would pass the limit of \(limit)")
        }
        if let later { later(cutNow) } else { cutNow() }
    }

    /// Queues catch-up behind everything sent before it, and sends what there is room for.
    func queueCatchUp(_ catchUp: CatchUp) {
        guard state == .established, !outputOverflowed else { return }
        outbox.append(.catchUp(catchUp))
        pumpOutput()
    }

    /// Writes what the queue holds as far as there is room: the live frames at its front at once,
    /// catch-up a frame at a time while few enough bytes wait for the peer.
    func pumpOutput() {
        guard !pumpingOutput else { return }
        pumpingOutput = true
        defer { pumpingOutput = false }
        while state != .closed, let front = outbox.front {
            switch front {
            case .frame(let body, let seals, _):
                outbox.popFront()
                write(body: body, seals: seals, catchUp: false)
            case .catchUp:
                guard hasCatchUpRoom else { return }
                var next: PeerFrame?
                outbox.updateFrontCatchUp { next = session.nextFrame(of: &$0) }
                if let frame = next {
                    digests.noteSent(frame)
                    write(body: frame.body(), seals: true, catchUp: true)
                } else {
                    outbox.popFront()
                }
            }
        }
    }

    /// Seals the frame of `body` (when `seals`) and hands it to the transport.
    private func write(body: [UInt8], seals: Bool, catchUp: Bool) {
        let bytes = channel.frame(body, seals: seals)
        bytesOut += bytes.count
        outbox.wrote(bytes.count, catchUp: catchUp)
        write(bytes)
    }
}
