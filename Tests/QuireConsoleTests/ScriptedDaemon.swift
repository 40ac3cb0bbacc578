import Foundation
import Glibc
import JSON
import QuireProtocol

/// A stand-in for the daemon that holds a data directory, for driving `quire join` and `quire
/// share` through what a real daemon cannot be made to do on cue: it holds the directory's lock
/// (so the command asks it rather than starting a daemon), takes editors on `editors.sock` in
/// it, answers each request with what `answer` gives, and sends the notifications `answer` gives
/// after the reply. Requests it heard are kept, in order.
final class ScriptedDaemon: @unchecked Sendable {
    typealias Answer = (_ method: String, _ params: JSONValue) -> (result: JSONValue, then: [(String, JSONValue)])

    /// An answer that is an error (-32602, `message`) instead of a result.
    static func refusal(_ message: String) -> JSONValue { ["__refusal": .string(message)] }

    let dataDirectory: String
    private let listener: Int32
    private let lockDescriptor: Int32
    private let lock = NSCondition()
    private var heard: [(method: String, params: JSONValue)] = []

    init(dataDirectory: String, answer: @escaping Answer) throws {
        self.dataDirectory = dataDirectory
        try FileManager.default.createDirectory(atPath: dataDirectory + "/documents", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        chmod(dataDirectory, 0o700)
        lockDescriptor = open(dataDirectory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockDescriptor >= 0, flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0 else { throw Failure("cannot lock \(dataDirectory)") }
        let path = dataDirectory + "/editors.sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw Failure("cannot listen on \(path)") }
        Thread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                Thread { [self] in serve(connection, answer: answer) }.start()
            }
        }.start()
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The methods of the requests heard so far, in order.
    var requests: [String] {
        lock.lock()
        defer { lock.unlock() }
        return heard.map(\.method)
    }

    /// The params of the requests of `method` heard so far.
    func params(of method: String) -> [JSONValue] {
        lock.lock()
        defer { lock.unlock() }
        return heard.filter { $0.method == method }.map(\.params)
    }

    private func serve(_ connection: Int32, answer: Answer) {
        var framer = MessageFramer()
        var chunk = [UInt8](repeating: 0, count: 65536)
        func send(_ message: JSONValue) {
            let bytes = FrameWriter().frame(JSONSerializer().serialize(message))
            _ = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            for event in framer.feed(chunk[0..<n]) {
                guard case .message(let body) = event, let message = try? JSONParser().parse(body),
                      let method = message["method"]?.stringValue else { continue }
                lock.lock()
                heard.append((method, message["params"] ?? .object([:])))
                lock.unlock()
                guard let id = message["id"] else { continue }
                let (result, then) = answer(method, message["params"] ?? .object([:]))
                if let refusal = result["__refusal"] {
                    send(["jsonrpc": "2.0", "id": id, "error": ["code": -32602, "message": refusal]])
                } else {
                    send(["jsonrpc": "2.0", "id": id, "result": result])
                }
                for (notification, params) in then { send(["jsonrpc": "2.0", "method": .string(notification), "params": params]) }
            }
        }
        Glibc.close(connection)
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        unlink(dataDirectory + "/editors.sock")
        Glibc.close(lockDescriptor)
    }
}
