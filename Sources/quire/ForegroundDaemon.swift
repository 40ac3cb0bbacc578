import ArgumentParser
import Foundation
import Logging
import QuireDaemon

/// The daemon `quire share` and `quire join` talk to: the one already holding the data
/// directory, reached on its editor socket, or, when the directory is free, a daemon run in this
/// process (on threads of its own) that serves its editor socket in the data directory, so the
/// editors the person starts afterwards attach to it as they do to any daemon holding it (and its
/// peer socket, so `quire peer --stdio` over ssh reaches it).
///
/// Guarantees: this process's daemon takes no stop signal itself (the command takes them, to
/// stop sharing first) and is stopped only by `stop()`, which returns once it has said goodbye to
/// its peers, synced its storage and removed its socket (or after `stopTimeout` seconds).
final class ForegroundDaemon: @unchecked Sendable {
    static let stopTimeout: Double = 20

    /// Where the daemon takes editors (and this command).
    let socketPath: String
    /// The data directory this process's daemon keeps documents in; nil when it keeps them in
    /// memory or another daemon serves.
    let dataDirectory: String?
    /// Whether the daemon runs in this process.
    var isOwn: Bool { server != nil }

    private let server: DaemonServer?
    private let lock = NSCondition()
    private var ended = false
    private var failure: String?
    /// A private folder made for the socket when there is no data directory; removed at the end.
    private let privateFolder: String?

    /// Finds the daemon holding the data directory `storage` names, or starts one here.
    init(storage: StorageOptions, logger: Logger) throws {
        let store: DocumentStore?
        var peerSocketPath: String?
        switch try storage.openStore(logger: logger, joiningHeld: true) {
        case .heldBy(let editorSocket):
            socketPath = editorSocket
            dataDirectory = nil
            server = nil
            privateFolder = nil
            return
        case .store(let opened):
            store = opened
            let location = EditorSocketLocation(dataDirectory: opened.path)
            try location.prepare()
            socketPath = location.socketPath
            // `ssh host quire peer --stdio` (a partner's `quire join --via`) reaches this daemon here.
            peerSocketPath = location.peerSocketPath
            privateFolder = nil
        case .memory:
            store = nil
            let folder = try Self.makePrivateFolder()
            socketPath = folder + "/editors.sock"
            privateFolder = folder
        }
        dataDirectory = store?.path
        var configuration = Daemon.Configuration(serverVersion: Quire.version)
        configuration.userName = UserNameFallback.resolve()
        let daemon = Daemon(configuration: configuration, logger: logger, store: store)
        var options = DaemonServer.Options(serveStdio: false, socketPath: socketPath)
        options.takesStopSignals = false
        options.peerSocketPath = peerSocketPath
        let server = DaemonServer(daemon: daemon, options: options, logger: logger)
        self.server = server
        let thread = Thread { [self] in
            var failure: String?
            do { _ = try server.run() } catch { failure = "\(error)" }
            lock.lock()
            ended = true
            self.failure = failure
            lock.broadcast()
            lock.unlock()
        }
        thread.name = "quire daemon"
        thread.start()
    }

    /// Whether this process's daemon has ended (it never ends by itself but on an error).
    var hasEnded: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Why this process's daemon ended, if it failed.
    var failureReason: String? {
        lock.lock()
        defer { lock.unlock() }
        return failure
    }

    /// Stops this process's daemon and waits for it to end; nothing for a daemon running apart.
    /// Returns false when it did not end in time.
    @discardableResult
    func stop() -> Bool {
        defer { removePrivateFolder() }
        guard let server else { return true }
        lock.lock()
        let running = !ended
        lock.unlock()
        if running { server.stop() }
        let deadline = Date().addingTimeInterval(Self.stopTimeout)
        lock.lock()
        defer { lock.unlock() }
        while !ended {
            guard lock.wait(until: deadline) else { return false }
        }
        return true
    }

    /// A folder only this user can open (mkdtemp makes it 0700), for a socket with no data
    /// directory to keep it in: in `$XDG_RUNTIME_DIR` when set, else the temporary directory.
    private static func makePrivateFolder() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        var base = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? environment["TMPDIR"] ?? "/tmp"
        if base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/quire-console-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let made else {
            throw ValidationError("cannot make a private folder for the daemon's socket in \(base): \(String(cString: strerror(errno)))")
        }
        return made
    }

    private func removePrivateFolder() {
        guard let privateFolder else { return }
        unlink(privateFolder + "/editors.sock")
        rmdir(privateFolder)
    }
}
