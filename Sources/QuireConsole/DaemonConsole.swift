import Foundation
import JSON
import QuireProtocol

/// A JSON-RPC 2.0 client on a daemon's editor socket, for the commands a person runs in a
/// terminal (`quire share`, `quire join`): it sends requests with ids and waits for their
/// replies, and hands every notification to `onNotification`.
///
/// Guarantees:
/// 1. Frames are LSP `Content-Length` frames (`FrameWriter`, `MessageFramer`); no message over
///    `maximumMessageBytes` is buffered, and JSON nested deeper than `maximumNestingDepth` is refused.
/// 2. Every `request` returns within its timeout: with the result, the daemon's error, or
///    `ConsoleError.closed` as soon as the connection ends.
/// 3. Notifications are handed over in the order they arrived, on the reader thread, one at a
///    time; `onClose` is called once, after the last of them, when the connection ends for
///    any reason other than `close()`.
public final class DaemonConsole: @unchecked Sendable {
    public static let maximumMessageBytes = 16 << 20
    public static let maximumNestingDepth = 64

    private let socket: DaemonSocket
    private let lock = NSCondition()
    private var nextID: Int64 = 1
    /// Replies that arrived for requests still waiting.
    private var replies: [Int64: Result<JSONValue, ResponseError>] = [:]
    private var waiting: Set<Int64> = []
    private var endReason: String?
    private var closedByUs = false
    private let writeLock = NSLock()

    /// Connects to the editor socket at `socketPath` and starts reading.
    public init(socketPath: String, onNotification: @escaping @Sendable (String, JSONValue) -> Void,
                onClose: @escaping @Sendable (String) -> Void) throws(ConsoleError) {
        socket = try DaemonSocket(path: socketPath)
        let thread = Thread { [self] in readLoop(onNotification: onNotification, onClose: onClose) }
        thread.name = "quire console reader"
        thread.start()
    }

    /// Connects to `socketPath`, trying again every 20 ms while nothing listens there yet (a
    /// daemon that is starting), for at most `seconds` or until `keepTrying` says no.
    public static func connect(socketPath: String, within seconds: Double, keepTrying: () -> Bool = { true },
                               onNotification: @escaping @Sendable (String, JSONValue) -> Void,
                               onClose: @escaping @Sendable (String) -> Void) throws(ConsoleError) -> DaemonConsole {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try DaemonConsole(socketPath: socketPath, onNotification: onNotification, onClose: onClose)
            } catch .cannotConnect(let path, let reason) {
                guard Date() < deadline, keepTrying() else { throw .cannotConnect(path: path, reason: reason) }
                usleep(20_000)
            }
        }
    }

    /// Sends `method` with `params` and waits for the reply: its result, or the daemon's error
    /// as `ConsoleError.refused`.
    public func request(_ method: String, _ params: JSONValue = .object([:]), timeout: Double = 30) throws(ConsoleError) -> JSONValue {
        lock.lock()
        let id = nextID
        nextID += 1
        waiting.insert(id)
        lock.unlock()
        send(.request(id: .number(id), method: method, params: params))
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer {
            waiting.remove(id)
            replies[id] = nil
            lock.unlock()
        }
        while true {
            if let reply = replies[id] {
                switch reply {
                case .success(let value): return value
                case .failure(let error): throw .refused(method: method, error)
                }
            }
            if let endReason { throw .closed(endReason) }
            if !lock.wait(until: deadline) && replies[id] == nil { throw .timedOut(method: method, seconds: timeout) }
        }
    }

    /// Sends a notification (no reply).
    public func notify(_ method: String, _ params: JSONValue = .object([:])) {
        send(.notification(method: method, params: params))
    }

    /// Closes the connection; `onClose` is not called for it.
    public func close() {
        lock.lock()
        closedByUs = true
        lock.unlock()
        socket.shutDown()
    }

    private func send(_ message: Message) {
        let bytes = FrameWriter().frame(JSONSerializer().serialize(message.json))
        writeLock.lock()
        defer { writeLock.unlock() }
        // A failed write shows as the end of the connection, which the reader reports.
        _ = socket.write(bytes)
    }

    private func readLoop(onNotification: @Sendable (String, JSONValue) -> Void, onClose: @Sendable (String) -> Void) {
        var framer = MessageFramer(maximumFrameBytes: Self.maximumMessageBytes)
        let parser = JSONParser(maximumDepth: Self.maximumNestingDepth)
        var reason = "it stopped"
        reading: while true {
            let bytes = socket.read()
            if bytes.isEmpty { break }
            for event in framer.feed(bytes) {
                switch event {
                case .error(let error):
                    reason = "it sent a frame that cannot be read (\(error))"
                    break reading
                case .message(let body):
                    guard let value = try? parser.parse(body), case .success(let message) = Message.decode(value) else {
                        reason = "it sent a message that is not JSON-RPC"
                        break reading
                    }
                    handle(message, onNotification: onNotification)
                }
            }
        }
        socket.shutDown()
        lock.lock()
        endReason = reason
        let tell = !closedByUs
        lock.broadcast()
        lock.unlock()
        if tell { onClose(reason) }
    }

    private func handle(_ message: Message, onNotification: @Sendable (String, JSONValue) -> Void) {
        switch message {
        case .notification(let method, let params):
            onNotification(method, params ?? .object([:]))
        case .response(.number(let id), let result):
            lock.lock()
            if waiting.contains(id) {
                replies[id] = result
                lock.broadcast()
            }
            lock.unlock()
        case .response:
            break
        case .request(let id, let method, _):
            // The daemon asks editors nothing today; a console has nothing to answer with.
            send(.response(id: id, result: .failure(.methodNotFound(method))))
        }
    }
}
