import Dispatch

/// Runs the syncs of one commit together on a few threads instead of one after another.
///
/// Each job is a document's own `fdatasync`/`fsync` calls on its own files, so running them at
/// the same time changes nothing of what each one guarantees: a job that returns has its files on
/// stable storage, and `run` returns only when every job has. What it saves is waiting: every
/// sync ends in a flush of the device's cache, and flushes asked for while one is under way are
/// served together by the next one, so a commit of many documents (a project opened) waits for
/// a few flushes instead of three per document.
///
/// Not thread-safe itself: one caller (the store, on the daemon's thread) runs one batch at a time.
final class ParallelSyncs {
    /// Jobs at most under way at once.
    let width: Int
    private let queues: [DispatchQueue]

    init(width: Int) {
        self.width = max(1, width)
        queues = (0..<self.width).map { DispatchQueue(label: "quire.storage.sync.\($0)") }
    }

    /// Runs every job, `width` at a time at most, each exactly once; returns each job's error
    /// (nil when it succeeded), in the jobs' order. A single job runs on the calling thread.
    func run(_ jobs: [() throws -> Void]) -> [Error?] {
        guard jobs.count > 1 else {
            return jobs.map { job in
                do { try job(); return nil } catch { return error }
            }
        }
        let errors = Slots(count: jobs.count)
        defer { errors.free() }
        // Each lane takes every `lanes`-th job, so no two threads touch one job or one slot;
        // the group's wait orders their writes before the reads below.
        let lanes = min(width, jobs.count)
        let group = DispatchGroup()
        for lane in 0..<lanes {
            queues[lane].async(group: group) {
                var index = lane
                while index < jobs.count {
                    do { try jobs[index]() } catch { errors.buffer[index] = error }
                    index += lanes
                }
            }
        }
        group.wait()
        return Array(errors.buffer)
    }

    /// One error slot per job, each written by the one lane that runs the job.
    private struct Slots: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<Error?>

        init(count: Int) {
            buffer = .allocate(capacity: count)
            buffer.initialize(repeating: nil)
        }

        func free() {
            buffer.deinitialize()
            buffer.deallocate()
        }
    }
}
