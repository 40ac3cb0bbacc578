import Dispatch
import Foundation

/// Writes the files of new documents on a thread of its own while the daemon goes on: under
/// `.sync` durability the store creates documents deferred (`DocumentFiles.create(deferred:)`)
/// and hands each one here once the next document is created or a commit begins, so that
/// making a project's thousands of directories and files overlaps with reading the next files
/// instead of following it. Nothing is acknowledged before the commit, which waits for them.
///
/// What makes it safe: a document handed over (`start`) is touched by nothing else until
/// `settle()` returns; the store settles before it touches such a document again, before every
/// commit and when it goes. Not thread-safe itself: the store calls it from one thread.
final class DocumentMaker {
    private let queue = DispatchQueue(label: "quire.storage.make")
    private let group = DispatchGroup()
    /// Created deferred and not handed over yet, in creation order.
    private var waiting: [DocumentFiles] = []
    /// Handed over: being written, or waiting their turn on the queue.
    private var inFlight: Set<UInt64> = []
    private let failures = Failures()

    /// `files` (created deferred) is to be written at the next `start()`.
    func add(_ files: DocumentFiles) {
        waiting.append(files)
    }

    /// Whether document `id` was handed over and not settled yet: nothing may touch it now.
    func isInFlight(_ id: UInt64) -> Bool {
        inFlight.contains(id)
    }

    /// Document `id` is going before it was handed over: it is never written.
    func drop(_ id: UInt64) {
        waiting.removeAll { $0.id == id }
    }

    /// Hands every waiting document over to the thread, in creation order.
    func start() {
        for files in waiting {
            inFlight.insert(files.id)
            let handed = Handed(files: files, failures: failures)
            queue.async(group: group) {
                do { try handed.files.makeFiles() } catch { handed.failures.add(handed.files, error) }
            }
        }
        waiting = []
    }

    /// Waits until every document handed over is written; returns those that could not be, with
    /// why (they stay unmade). Immediate when none was handed over.
    func settle() -> [(files: DocumentFiles, error: Error)] {
        guard !inFlight.isEmpty else { return [] }
        group.wait()
        inFlight = []
        return failures.take()
    }

    /// A document passed to the thread, which alone touches it until the store settles.
    private struct Handed: @unchecked Sendable {
        let files: DocumentFiles
        let failures: Failures
    }

    /// The documents the thread could not write, with why.
    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [(files: DocumentFiles, error: Error)] = []

        func add(_ files: DocumentFiles, _ error: Error) {
            lock.lock()
            defer { lock.unlock() }
            list.append((files, error))
        }

        func take() -> [(files: DocumentFiles, error: Error)] {
            lock.lock()
            defer { lock.unlock() }
            let taken = list
            list = []
            return taken
        }
    }
}
