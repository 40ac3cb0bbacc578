import Foundation
import Logging
import QuireDaemon

/// Bridges stdin/stdout to the daemon that holds the data directory, at its Unix socket
/// `socketPath` (its editor socket for `quire`, its peer socket for `quire peer --stdio`), and
/// returns the bridge's exit status once it ends. The holder may have just started and not be
/// listening yet, so a failed connection is retried for 3 seconds. Returns nil, having logged
/// why, when it cannot be joined: a setting that retrying cannot fix (stdio that cannot be
/// bridged, a socket of another user's) or a holder still not listening after the retries.
func joinRunningDaemon(socketPath: String, command: String, logger: Logger) -> Int32? {
    let deadline = Date().addingTimeInterval(3)
    while true {
        do {
            return try AttachBridge.run(socketPath: socketPath, command: command)
        } catch let error as PeerNetworkError {
            logger.warning("cannot join the daemon at \(socketPath): \(error)")
            return nil
        } catch {
            if Date() < deadline {
                usleep(50_000)
                continue
            }
            logger.warning("cannot join the daemon at \(socketPath): \(error)")
            return nil
        }
    }
}
