import Foundation
import Logging
import QuireDaemon
import QuireTestSupport
import Testing

/// `DaemonServer.stop()`, for a process that takes the stop signals itself (`quire share`):
/// `run()` returns 0 and its editor socket is gone, whether the stop comes while it serves or
/// before it started.
@Suite(.serialized) struct DaemonServerStopTests {
    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<Int32, Error>?
        func set(_ result: Result<Int32, Error>) { lock.lock(); value = result; lock.unlock() }
        var status: Int32? { lock.lock(); defer { lock.unlock() }; return try? value?.get() }
        var ended: Bool { lock.lock(); defer { lock.unlock() }; return value != nil }
    }

    static func server(socket: String) -> DaemonServer {
        var options = DaemonServer.Options(serveStdio: false, socketPath: socket)
        options.takesStopSignals = false
        return DaemonServer(daemon: Daemon(), options: options, logger: Logger(label: "test"))
    }

    static func run(_ server: DaemonServer) -> Outcome {
        let outcome = Outcome()
        Thread { outcome.set(Result { try server.run() }) }.start()
        return outcome
    }

    @Test func stopEndsRunAndRemovesTheSocket() {
        let socket = DaemonProcess.temporaryDirectory("quire-stop") + "/editors.sock"
        let server = Self.server(socket: socket)
        let outcome = Self.run(server)
        #expect(waitUntil { FileManager.default.fileExists(atPath: socket) }, "the daemon serves its socket")
        #expect(!outcome.ended)
        server.stop()
        #expect(waitUntil { outcome.ended })
        #expect(outcome.status == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test func aStopBeforeRunEndsItAsSoonAsItServes() {
        let socket = DaemonProcess.temporaryDirectory("quire-stop") + "/editors.sock"
        let server = Self.server(socket: socket)
        server.stop()
        let outcome = Self.run(server)
        #expect(waitUntil { outcome.ended })
        #expect(outcome.status == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
