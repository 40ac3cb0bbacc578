import Dispatch
import Foundation
import JSON
import QuireProtocol

/// Reads a `quire` process's stdio for a benchmark's editor: its framed messages and its log,
/// each on a thread of its own until the pipe closes.
///
/// Guarantees: `message` gets each parsed message of stdout in order, with its bytes and the time they
/// were read (`DispatchTime` nanoseconds), and `log` each piece of stderr as text; both run with
/// `lock` held, which is then broadcast, so a `wait` on it sees what they recorded. A body that
/// does not parse is skipped.
enum DaemonPipeReaders {
    static func start(output: Pipe, errors: Pipe, lock: NSCondition,
                      message: @escaping @Sendable (JSONValue, [UInt8], UInt64) -> Void,
                      log: @escaping @Sendable (String) -> Void) {
        let handle = output.fileHandleForReading
        Thread {
            var framer = MessageFramer(maximumFrameBytes: 64 << 20)
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                let at = DispatchTime.now().uptimeNanoseconds
                for case .message(let body) in framer.feed([UInt8](data)) {
                    guard let parsed = try? JSONParser().parse(body) else { continue }
                    lock.lock()
                    message(parsed, body, at)
                    lock.broadcast()
                    lock.unlock()
                }
            }
        }.start()
        let errorHandle = errors.fileHandleForReading
        Thread {
            while true {
                let data = errorHandle.availableData
                if data.isEmpty { return }
                lock.lock()
                log(String(decoding: data, as: UTF8.self))
                lock.broadcast()
                lock.unlock()
            }
        }.start()
    }
}
