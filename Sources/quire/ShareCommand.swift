import ArgumentParser
import Foundation
import JSON
import Logging
import QuireConsole
import QuireProject

/// `quire share [DIR|FILE]`: shares a folder, or one file by itself (`project/share`), prints the
/// line the partner runs and then who joins and leaves, until Ctrl-C stops sharing (`project/stop`).
struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share a folder or one file: prints the `quire join` line your partner runs, then who joins and leaves.",
        discussion: """
        Shares every text file under DIR (default: the project root of the current folder, the \
        nearest one holding .git or .quire-root), leaving out what .gitignore and .quireignore \
        name and binary or oversized files. Given a FILE, shares that one text file by itself: \
        a project of one file, with its own line, members and roles (`quire invite --role read \
        FILE`, `quire members FILE`, `quire role`, `quire revoke`); nothing else in its folder is \
        ever shared, and the partner gets a folder holding that file. Runs the daemon here in the \
        foreground, or asks the quire already running for the data directory; editors you start \
        afterwards reach it and open the project's files as usual. Ctrl-C stops sharing. With \
        --detach, only asks the quire already running (your editor's), prints the line and \
        returns, leaving it shared: `:!quire share --detach %:S` in Vim or Neovim shares the file \
        being edited (then `:e` to join it in the buffer).
        """
    )

    @Argument(help: "The folder to share, or one file to share by itself (default: the project root of the current folder).")
    var directory: String?

    @Option(name: .customLong("listen"), help: "Accept the partner on [host:]port (a port alone: every interface; port 0 picks one). Repeatable.")
    var listen: [String] = []

    @Option(help: "Also be reachable through the relay at host:port (`quire relay`), for partners who cannot reach this machine.")
    var relay: String?

    @Flag(help: "Ask the quire already running for the data directory (an editor's) to share, print the line and return at once; it stays shared while that quire runs.")
    var detach = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    @OptionGroup var storage: StorageOptions

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel.debugDescription)") }
        if detach && storage.ephemeral { throw ValidationError("--detach asks the quire already running; --ephemeral starts one of its own") }
        do {
            for spec in listen { _ = try ConsoleArguments.listenAddress(spec) }
            if let relay { _ = try ConsoleArguments.relayAddress(relay) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        ConsoleSession.takeStopSignals()
        let root: String
        let listening: [String]
        do {
            try Self.refuseArgumentsNotText()
            root = try Self.pathToShare(directory)
            listening = try listen.map(ConsoleArguments.listenAddress)
        } catch {
            FileHandle.standardError.write(Data("quire share: \(error)\n".utf8))
            throw ExitCode(1)
        }
        if detach {
            try Self.shareDetached(root: root, listen: listening, relay: try relay.map(ConsoleArguments.relayAddress), dataDirectory: storage.dataDir)
            return
        }
        bootstrapLogging(logLevel)
        let session: ConsoleSession
        do {
            session = try ConsoleSession(storage: storage, clientName: "quire share", logger: Logger(label: "quire"))
        } catch {
            FileHandle.standardError.write(Data("quire share: \(error)\n".utf8))
            throw ExitCode(1)
        }
        throw ExitCode(Self.share(root: root, listen: listening, relay: try relay.map(ConsoleArguments.relayAddress), in: session))
    }

    /// Shares `root` through `session` and shows what happens until a stop signal.
    static func share(root: String, listen: [String], relay: String?, in session: ConsoleSession) -> Int32 {
        var params: [String: JSONValue] = ["root": .string(root)]
        if !listen.isEmpty { params["listen"] = .array(listen.map { .string($0) }) }
        if let relay { params["relay"] = .string(relay) }
        let running = session.activeProjectKeys()
        let project: SharedProject
        do {
            project = try SharedProject(reply: try session.console.request("project/share", .object(params), timeout: 300))
        } catch {
            return session.fail("\(error)")
        }
        session.terminal.say(ConsoleScreen.shared(project, daemonNote: session.daemonNote))
        let sharedBefore = running.contains(project.key)
        if sharedBefore { session.terminal.say(ConsoleScreen.alreadyRunning(project.name, sharing: true)) }
        while true {
            switch session.next() {
            case .stop where sharedBefore:
                return session.finish(key: nil, lastLine: ConsoleScreen.leftRunning(project.name, sharing: true))
            case .stop:
                return session.finish(key: project.key, lastLine: ConsoleScreen.stoppedSharing(project.name))
            case .daemonGone(let reason):
                return session.fail("\(reason); sharing \"\(project.name)\" stopped")
            case .notification(let method, let params) where ConsoleSession.isRemoval(method: method, params: params, key: project.key):
                return session.endRemoved(params: params, key: project.key, name: project.name, sharing: true)
            case .notification(let method, let params):
                if let line = session.liveLine(method: method, params: params, key: project.key) { session.terminal.event(line) }
            case .quiet:
                continue   // asked for no deadline
            }
        }
    }

    /// `--detach`: the quire running for `dataDirectory` shares `root`; the screen is printed and
    /// the command returns, leaving it shared. Never starts a daemon (`RunningDaemon`).
    static func shareDetached(root: String, listen: [String], relay: String?, dataDirectory: String?) throws {
        var params: [String: JSONValue] = ["root": .string(root)]
        if !listen.isEmpty { params["listen"] = .array(listen.map { .string($0) }) }
        if let relay { params["relay"] = .string(relay) }
        try RunningDaemon.run(dataDirectory: dataDirectory, clientName: "quire share") { daemon in
            let project = try SharedProject(reply: daemon.request("project/share", .object(params)))
            printLines(ConsoleScreen.sharedDetached(project))
        }
    }

    /// Throws naming the first argument that is not UTF-8: Swift reads such an argument with
    /// U+FFFD for its odd bytes, which names another file (the one whose name holds U+FFFD,
    /// which anyone who may write in the folder can make), so it would be shared instead.
    static func refuseArgumentsNotText() throws {
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            throw ConsoleFailure("\(ConsoleScreen.clean(String(cString: raw), limit: 200)) is not UTF-8 text; Quire names files by UTF-8 paths: rename it to share it")
        }
    }

    /// What `quire share` shares: `directory` (a folder or a regular file) made absolute and
    /// resolved, or the project root of the current folder. Throws a message when it is
    /// neither a folder nor a file one can share.
    static func pathToShare(_ directory: String?) throws -> String {
        let current = FileManager.default.currentDirectoryPath
        guard let directory else {
            guard let root = ProjectRoot.find(from: current) else {
                throw ConsoleFailure("\(ConsoleScreen.clean(current, limit: 200)) is in no project (no .git or .quire-root in it or above it): "
                    + "name the folder to share, `quire share DIR`, or mark the root with `touch .quire-root`")
            }
            return root
        }
        let absolute = directory.hasPrefix("/") ? directory : current + "/" + directory
        guard let resolved = realpath(absolute, nil) else {
            throw ConsoleFailure("cannot share \(ConsoleScreen.clean(directory, limit: 200)): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        let path = String(cString: resolved)
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR || info.st_mode & S_IFMT == S_IFREG else {
            throw ConsoleFailure("cannot share \(ConsoleScreen.clean(directory, limit: 200)): it is not a folder or a regular file")
        }
        return path
    }
}
