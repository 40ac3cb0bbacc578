import ArgumentParser
import Foundation
import JSON
import Logging
import QuireConsole
import QuireDaemon

/// What `quire share` and `quire join` have in common: the stop signals taken by one thread,
/// the daemon (`ForegroundDaemon`), the connection to it (`DaemonConsole`), and one queue of
/// what happens (a notification, a stop signal, the daemon gone) that the command's main
/// thread takes in order.
///
/// Guarantees: from `start` on, SIGINT, SIGTERM and SIGHUP never kill the process: each becomes
/// a `.stop` event; SIGPIPE is ignored (a closed stdout loses the screen, not the project).
final class ConsoleSession: @unchecked Sendable {
    enum Event {
        case notification(String, JSONValue)
        case stop
        case daemonGone(String)
        /// Nothing came before the deadline `next(until:)` was given.
        case quiet
    }

    let terminal = ConsoleTerminal()
    /// `quire share` or `quire join`: how the command names itself in messages.
    let clientName: String
    let daemon: ForegroundDaemon
    private(set) var console: DaemonConsole!
    private let queue = NSCondition()
    private var events: [Event] = []

    /// Blocks the stop signals (before any thread starts, so every thread inherits the mask);
    /// call first thing in `run()`.
    static func takeStopSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts or finds the daemon and connects to it as `clientName`. Throws a message for the
    /// person when neither works.
    init(storage: StorageOptions, clientName: String, logger: Logger) throws {
        self.clientName = clientName
        daemon = try ForegroundDaemon(storage: storage, logger: logger)
        Thread { [self] in
            var signals = sigset_t()
            sigemptyset(&signals)
            for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
            var number: Int32 = 0
            while sigwait(&signals, &number) == 0 { post(.stop) }
        }.start()
        do {
            // A daemon started here needs a moment to bind its socket; one already running answers at once.
            let daemon = self.daemon
            console = try DaemonConsole.connect(
                socketPath: daemon.socketPath, within: daemon.isOwn ? 30 : 3, keepTrying: { !daemon.hasEnded && !self.stopRequested },
                onNotification: { [weak self] method, params in self?.post(.notification(method, params)) },
                onClose: { [weak self] reason in self?.post(.daemonGone(reason)) })
            _ = try console.request("initialize", ["protocolVersion": 1, "clientInfo": ["name": .string(clientName), "version": .string(Quire.version)]])
            console.notify("initialized")
        } catch {
            let reason = daemon.failureReason.map { "the daemon could not start: \($0)" } ?? "\(error)"
            daemon.stop()
            throw ConsoleFailure(reason)
        }
    }

    /// The keys of the projects the daemon shares or follows now (`project/list`); none when it
    /// cannot say. Asked before sharing or joining: a project that was already running when the
    /// command started is left running when it ends (another `quire share` may be showing it).
    func activeProjectKeys() -> Set<String> {
        guard !daemon.isOwn, let reply = try? console.request("project/list", timeout: 10) else { return [] }
        return Set((reply["projects"]?.arrayValue ?? []).compactMap { $0["key"]?.stringValue })
    }

    /// Links of another scope (a held daemon's other projects, its general links): their
    /// joins and leaves are not this command's. Used only on the command's main thread.
    private var foreignLinks: Set<Int64> = []

    /// The line to print for notification `method` about project `key`, if any. A link that
    /// joined is looked up in `peer/status`: one of another scope is left out, with its leaving;
    /// one of this project's is shown with its role.
    func liveLine(method: String, params: JSONValue, key: String) -> String? {
        if method == "peer/changed", let link = params["link"]?.integerValue, link != 0 {
            switch params["event"]?.stringValue {
            case "joined"?:
                let status = try? console.request("peer/status", timeout: 10)
                let entry = status?["links"]?.arrayValue?.first { $0["link"]?.integerValue == link }
                if let scope = entry?["scope"]?.stringValue, scope != ConsoleScreen.projectScope(key) {
                    foreignLinks.insert(link)
                    return nil
                }
                return ConsoleScreen.liveLine(method: method, params: params, key: key, role: entry?["role"]?.stringValue)
            case "left"?:
                if foreignLinks.remove(link) != nil { return nil }
            default:
                break
            }
        }
        return ConsoleScreen.liveLine(method: method, params: params, key: key)
    }

    /// Whether a stop signal is waiting in the queue.
    var stopRequested: Bool {
        queue.lock()
        defer { queue.unlock() }
        return events.contains { if case .stop = $0 { return true } else { return false } }
    }

    /// The next event, waiting for one; `.quiet` once `deadline` (when given) passed with none.
    func next(until deadline: Date? = nil) -> Event {
        queue.lock()
        defer { queue.unlock() }
        while events.isEmpty {
            if let deadline {
                if !queue.wait(until: deadline), events.isEmpty { return .quiet }
            } else {
                queue.wait()
            }
        }
        return events.removeFirst()
    }

    private func post(_ event: Event) {
        queue.lock()
        events.append(event)
        queue.broadcast()
        queue.unlock()
    }

    /// A line saying which daemon holds the project: this process's, or one already running.
    var daemonNote: String {
        if !daemon.isOwn { return "Shared by the quire already running for this data directory; it keeps sharing until Ctrl-C here." }
        if let directory = daemon.dataDirectory {
            return "Editors you start now reach this quire (data directory \(ConsoleScreen.clean(directory, limit: 200)))."
        }
        return "This quire keeps nothing on disk (--ephemeral): editors you start now do not reach it."
    }

    /// Stops following or sharing project `key` (when known), prints `lastLine`, stops this
    /// process's daemon, and returns the exit status: 0 when all of it went well.
    func finish(key: String?, lastLine: String) -> Int32 {
        var status: Int32 = 0
        if let key {
            do {
                _ = try console.request("project/stop", ["key": .string(key)], timeout: 10)
            } catch {
                FileHandle.standardError.write(Data("\(clientName): could not stop the project: \(error)\n".utf8))
                status = 1
            }
        }
        console.close()
        if !daemon.stop() {
            FileHandle.standardError.write(Data("\(clientName): the daemon did not stop within \(Int(ForegroundDaemon.stopTimeout)) seconds\n".utf8))
            status = 1
        }
        terminal.endProgress()
        terminal.say(lastLine)
        return status
    }

    /// Whether notification `method` says this daemon was removed from project `key`.
    static func isRemoval(method: String, params: JSONValue, key: String) -> Bool {
        method == "project/removed" && params["key"]?.stringValue == key
    }

    /// Ends once this daemon was removed from project `key`, or its invitation refused
    /// (`project/removed`; the daemon stopped the project itself, its files stay): says so, stops
    /// this process's daemon, and returns 1, as the command did not end as the person asked.
    func endRemoved(params: JSONValue, key: String, name: String, sharing: Bool) -> Int32 {
        let line = ConsoleScreen.removed(params, key: key) ?? "You were removed from \"\(ConsoleScreen.clean(name, limit: 100))\" by an owner."
        terminal.event(line)
        _ = finish(key: nil, lastLine: ConsoleScreen.endedRemoved(name, sharing: sharing))
        FileHandle.standardError.write(Data("\(clientName): \(line)\n".utf8))
        return 1
    }

    /// Ends after an error: stops this process's daemon, says `message` on stderr, returns 1.
    func fail(_ message: String) -> Int32 {
        terminal.endProgress()
        console.close()
        daemon.stop()
        FileHandle.standardError.write(Data("\(clientName): \(message)\n".utf8))
        return 1
    }
}

/// A failure told to the person as it is (`quire: <message>` on stderr, exit status 1).
struct ConsoleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
