import Dispatch
import Foundation

/// The maker's own thread: waits for a quiet moment, then gives queued documents their own
/// files a round at a time, and removes the packs no document waits for any more.
extension DocumentFilesMaker {
    func schedule() {
        guard !scheduled else { return }
        scheduled = true
        queue.async { [self] in run() }
    }

    func run() {
        while true {
            condition.lock()
            // Waits for a quiet moment (woken early by `finish()`).
            while !mayStartRound(at: DispatchTime.now().uptimeNanoseconds) {
                let now = DispatchTime.now().uptimeNanoseconds, quietAt = max(heldUntil, lastCreated &+ Self.quietNanoseconds)
                _ = condition.wait(until: Date(timeIntervalSinceNow: held > 0 || quietAt <= now ? 1 : Double(quietAt - now) / 1e9))
            }
            var round: [Job] = []
            while round.count < Self.roundSize, waitingStart < waiting.count {
                let id = waiting[waitingStart]
                guard let job = queued[id] else {   // claimed meanwhile
                    waitingStart += 1
                    continue
                }
                guard job.pack != nil else { break }   // not in a pack yet: after the next flush
                waitingStart += 1
                queued[id] = nil
                inProgress.insert(job.id)
                round.append(job)
            }
            if waitingStart == waiting.count {
                waiting = []
                waitingStart = 0
            } else if waitingStart > 4096 {
                waiting.removeFirst(waitingStart)
                waitingStart = 0
            }
            if round.isEmpty {
                scheduled = false
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            let errors = make(round)
            condition.lock()
            var removed: [DocumentPack] = []
            for (job, error) in zip(round, errors) {
                inProgress.remove(job.id)
                if error == nil {
                    made.insert(job.id)
                    if let pack = settle(job.id) { removed.append(pack) }
                } else {
                    failed[job.id] = job   // its pack keeps it; the store makes it when it touches it
                }
            }
            condition.broadcast()
            condition.unlock()
            finishRemoving(removed)
        }
    }

    /// Whether the thread may start a round at `now` (`DispatchTime` nanoseconds; under the
    /// lock): when `finish()` hurries it, or when no bulk write holds it (`holdWhile`, `holdFor`)
    /// and the store has been quiet for `quietNanoseconds`.
    func mayStartRound(at now: UInt64) -> Bool {
        hurry || (held == 0 && now >= heldUntil && now >= lastCreated &+ Self.quietNanoseconds)
    }

    /// Makes each job's files durably (`DocumentFiles.makeDurably`); each one's error or nil.
    func make(_ round: [Job]) -> [Error?] {
        let documents = round.map { job in
            Result { DocumentFiles.Unfinished(directory: job.directory, uri: job.uri, id: job.id, records: try job.records()) }
        }
        return DocumentFiles.makeDurably(documents, in: documentsPath, syncs: syncs)
    }

    /// Document `id` no longer needs its pack (under the lock). Returns the pack when it was
    /// the last one its pack waited for: it is marked removed, so nothing is appended to it.
    func settle(_ id: UInt64) -> DocumentPack? {
        guard let number = packOf[id], var state = packs[number] else { return nil }
        state.pending.remove(id)
        // The current pack is kept while small, for the next documents: an editor opening files
        // one by one would otherwise make and remove a pack per open.
        guard state.pending.isEmpty, state.pack !== current || state.pack.size >= Self.keptPackBytes else {
            packs[number] = state
            return nil
        }
        return remove(number)
    }

    /// Marks pack `number` removed and forgets it (under the lock); the caller unlinks it.
    func remove(_ number: Int) -> DocumentPack? {
        guard let state = packs.removeValue(forKey: number) else { return nil }
        state.pack.isRemoved = true
        for member in state.members { packOf[member] = nil }
        if current === state.pack { current = nil }
        return state.pack
    }

    /// Removes packs that no document waits for (after the lock: nothing appends to them).
    func finishRemoving(_ removed: [DocumentPack]) {
        guard !removed.isEmpty else { return }
        for pack in removed { unlink(pack.path) }
        _ = try? FileSystem.syncDirectory(packsPath)
    }
}
