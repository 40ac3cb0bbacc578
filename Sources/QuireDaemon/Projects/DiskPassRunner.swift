import Dispatch
import Foundation

/// Where a project's disk pass does its disk work (`ProjectService.syncDisk`): planning against
/// the disk, writing, syncing and renaming. The daemon's runner does it on one serial queue off
/// the event loop, so the loop goes on reading the network (the rest of a joined tree) while a
/// pass writes and syncs; the result is handed back to the loop, which alone changes the
/// daemon's state. Without a runner (`ProjectService.diskPasses` nil) a pass does its work at
/// once, on the caller.
///
/// Guarantees: work runs one pass at a time, in the order started; each result is handed to its
/// `done` exactly once, on the loop, either by the hop back to the loop or by `settle` (whichever
/// comes first); `settle` returns once every pass started before it has done its work.
final class DiskPassRunner {
    /// Runs a closure on the daemon's event loop soon (thread-safe: `EventLoop.execute`).
    private let toLoop: (@escaping () -> Void) -> Void
    /// Starts a closure off the loop, after the ones started before it.
    private let start: (@escaping @Sendable () -> Void) -> Void
    /// Returns once every closure started before has run.
    private let drain: () -> Void

    /// The daemon's runner: one serial queue, `toLoop` hops back to the event loop.
    convenience init(toLoop: @escaping (@escaping () -> Void) -> Void) {
        let queue = DispatchQueue(label: "quire.projects.disk-pass", qos: .userInitiated)
        self.init(toLoop: toLoop, start: { queue.async(execute: $0) }, drain: { queue.sync {} })
    }

    /// A runner on other hands (tests start and drain the work themselves).
    init(toLoop: @escaping (@escaping () -> Void) -> Void, start: @escaping (@escaping @Sendable () -> Void) -> Void, drain: @escaping () -> Void) {
        self.toLoop = toLoop
        self.start = start
        self.drain = drain
    }

    /// A pass's result between its work and its `done` (taken once, under the lock).
    final class Pending: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Any?
        private var done: ((Any) -> Void)?

        fileprivate init(done: @escaping (Any) -> Void) { self.done = done }

        fileprivate func put(_ value: Any) {
            lock.lock()
            result = value
            lock.unlock()
        }

        /// Runs `done` with the result if it came and `done` did not run yet (on the loop).
        func finish() {
            lock.lock()
            let value = result, done = value == nil ? nil : self.done
            if value != nil { self.done = nil }
            lock.unlock()
            if let value, let done { done(value) }
        }
    }

    /// Runs `work` off the loop, then `done` with its result on the loop; the returned `Pending`
    /// lets `settle` finish it sooner.
    func run<Result>(_ work: @escaping @Sendable () -> Result, done: @escaping (Result) -> Void) -> Pending {
        // `work`'s result is only handed over, never touched off the loop after it is made.
        let pending = Pending { value in
            if let result = value as? Result { done(result) }
        }
        start { [toLoop] in
            pending.put(work())
            toLoop { pending.finish() }
        }
        return pending
    }

    /// Waits for the work of `pending` (and every pass started before it) and finishes it now,
    /// on the loop: for what must not run while a pass writes (an editor's read or save of a
    /// project file, a scan, stopping the project).
    func settle(_ pending: Pending) {
        drain()
        pending.finish()
    }
}
