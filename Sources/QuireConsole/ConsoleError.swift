import Glibc
import QuireDaemon
import QuireProtocol

/// Why `quire share` or `quire join` could not go on, worded for the person at the terminal.
public enum ConsoleError: Error, Equatable, CustomStringConvertible {
    /// Nothing accepts connections at `path` (yet).
    case cannotConnect(path: String, reason: String)
    /// The socket's daemon runs as another user (or the kernel did not say who).
    case notYourDaemon(path: String, uid: uid_t?)
    /// The daemon answered a request with an error.
    case refused(method: String, ResponseError)
    /// The daemon closed the connection (it stopped), or sent something that is not JSON-RPC.
    case closed(String)
    /// No answer in time.
    case timedOut(method: String, seconds: Double)
    /// The daemon's answer lacks what the command needs, or breaks a bound.
    case badReply(method: String, String)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let reason):
            return "cannot reach the daemon at \(Self.shown(path)): \(Self.shown(reason))"
        case .notYourDaemon(let path, let uid):
            let who = uid.map { "uid \($0)" } ?? "a process the kernel does not name"
            return "the daemon at \(Self.shown(path)) runs as \(who), not as you (uid \(getuid())); nothing is sent to it"
        case .refused(let method, let error):
            if error.code == ResponseError.methodNotFoundCode {
                return "the daemon does not know \(method): is the quire holding the data directory older than this one? Stop it, or pass --data-dir"
            }
            return "the daemon refused \(method): \(Self.shown(error.message, limit: DisplayText.maximumReasonLength))"
        case .closed(let why): return "the daemon closed the connection: \(why)"
        case .timedOut(let method, let seconds):
            return "the daemon did not answer \(method) within \(Int(seconds)) seconds"
        case .badReply(let method, let why): return "the daemon's answer to \(method) cannot be used: \(why)"
        }
    }

    /// Text from outside (a path, a daemon's message), cleaned and cut for the terminal.
    static func shown(_ text: String, limit: Int = 300) -> String {
        DisplayText.clean(text, limit: limit)
    }
}
