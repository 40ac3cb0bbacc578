import ArgumentParser
import Foundation
import JSON
import Logging
import QuireConsole
import QuireProject

/// `quire join LINE [DIR]`: joins the project a `quire share` line names (`project/join`),
/// shows its files arriving, then who joins and leaves, until Ctrl-C stops following it.
struct JoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a shared folder: the line `quire share` printed; its files arrive in DIR.",
        discussion: """
        Connects to the sharing daemon (its key is pinned by the line), writes the project's files \
        into DIR (default: a new folder named after the project, in the current folder) and keeps \
        them in sync. Runs the daemon here in the foreground, or asks the quire already running \
        for the data directory; editors you start afterwards reach it and open the files as \
        usual. Ctrl-C stops following the project; its files stay.
        """
    )

    @Argument(help: "The line `quire share` printed (qj1-...), or - to read it from standard input. Other users of this machine can see a command's arguments: Quire hides the line from them once it starts, and with - it is never there.")
    var line: String

    @Argument(help: "Where the files go (default: ./<project name>).")
    var directory: String?

    @Option(help: "Reach the sharing machine through this command (e.g. 'ssh ann@host'; the daemon runs `quire peer --stdio` after it, which reaches the Quire running there), instead of the line's addresses.")
    var via: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    @OptionGroup var storage: StorageOptions

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel.debugDescription)") }
        if let via {
            do { _ = try ConsoleArguments.viaCommand(via) } catch { throw ValidationError(error.description) }
        }
    }

    func run() throws {
        // The line admits whoever holds it: out of the process list before anything else
        // (`-` is no secret: the line then comes from standard input).
        if line != "-" { ArgumentScrubbing.hide(line) }
        ConsoleSession.takeStopSignals()
        var lineText = line
        if line == "-" {
            if isatty(STDIN_FILENO) != 0 { FileHandle.standardError.write(Data("Paste the line `quire share` printed: ".utf8)) }
            guard let read = ArgumentScrubbing.readLine(limit: 4 * JoinLine.maximumCharacters) else {
                FileHandle.standardError.write(Data("quire join: no join line on standard input\n".utf8))
                throw ExitCode(1)
            }
            lineText = read
        }
        // A wrong or cut line is refused here, at once, before any daemon is started or asked.
        let joinLine: JoinLine
        let folder: String
        let viaCommand: String?
        do {
            joinLine = try JoinLine(parsing: lineText)
            folder = try Self.folder(directory, projectName: joinLine.name)
            viaCommand = try via.map(ConsoleArguments.viaCommand)
        } catch {
            FileHandle.standardError.write(Data("quire join: \(error)\n".utf8))
            throw ExitCode(1)
        }
        bootstrapLogging(logLevel)
        let session: ConsoleSession
        do {
            session = try ConsoleSession(storage: storage, clientName: "quire join", logger: Logger(label: "quire"))
        } catch {
            FileHandle.standardError.write(Data("quire join: \(error)\n".utf8))
            throw ExitCode(1)
        }
        throw ExitCode(Self.join(joinLine, into: folder, via: viaCommand, in: session))
    }

    /// Joins `line` into `folder` through `session`, shows the files arriving and then what
    /// happens, until a stop signal.
    /// Seconds with no link to the host before `quire join` says so.
    static let quietNoteSeconds = 15.0

    static func join(_ line: JoinLine, into folder: String, via: String?, in session: ConsoleSession) -> Int32 {
        let terminal = session.terminal
        terminal.say(ConsoleScreen.joining(name: line.name, directory: folder))
        var params: [String: JSONValue] = ["line": .string(line.encoded), "directory": .string(folder)]
        if let via { params["via"] = .string(via) }
        let running = session.activeProjectKeys()
        let project: JoinedProject
        do {
            project = try JoinedProject(reply: try session.console.request("project/join", .object(params), timeout: 120),
                                        line: line, directory: folder)
        } catch {
            return session.fail("\(error)")
        }
        let joinedBefore = running.contains(project.key)
        if joinedBefore { terminal.say(ConsoleScreen.alreadyRunning(project.name, sharing: false)) }
        var complete = false
        // Until a link of the project is up, an authentication failure on the line's own
        // addresses is the sharing daemon refusing the line (used up, expired, withdrawn):
        // retrying cannot help, so the join ends saying so.
        var linked = joinedBefore
        let targets = (line.addresses + [line.relay].compactMap { $0 }).map(\.description) + [via].compactMap { $0 }
        // No link for a while: say so once (through a relay a used-up line is never refused: no
        // one is paired with it), and keep trying.
        var quietNote: Date? = linked ? nil : Date().addingTimeInterval(Self.quietNoteSeconds)
        while true {
            switch session.next(until: linked ? nil : quietNote) {
            case .quiet:
                quietNote = nil
                terminal.say(ConsoleScreen.noLinkYet(name: project.name, seconds: Int(Self.quietNoteSeconds), relay: line.relay != nil))
            case .stop where joinedBefore:
                return session.finish(key: nil, lastLine: ConsoleScreen.leftRunning(project.name, sharing: false))
            case .stop:
                return session.finish(key: project.key, lastLine: ConsoleScreen.stoppedFollowing(project.name))
            case .daemonGone(let reason):
                return session.fail("\(reason); following \"\(project.name)\" stopped")
            case .notification("project/progress", let params) where !complete:
                guard let progress = ProjectProgress(params), progress.key == project.key else { continue }
                terminal.progress(progress)
                if progress.isComplete {
                    complete = true
                    terminal.say(ConsoleScreen.joined(name: project.name, files: progress.files, directory: project.directory))
                }
            case .notification("peer/changed", let params) where !linked && ConsoleScreen.isLineRefused(params, targets: targets):
                if let shown = session.liveLine(method: "peer/changed", params: params, key: project.key) { terminal.event(shown) }
                _ = session.finish(key: project.key, lastLine: "Joining \"\(ConsoleScreen.clean(project.name, limit: 100))\" stopped: the line was refused.")
                FileHandle.standardError.write(Data("quire join: \(ConsoleScreen.lineRefused)\n".utf8))
                return 1
            case .notification(let method, let params) where ConsoleSession.isRemoval(method: method, params: params, key: project.key):
                return session.endRemoved(params: params, key: project.key, name: project.name, sharing: false)
            case .notification(let method, let params):
                if let shown = session.liveLine(method: method, params: params, key: project.key) {
                    terminal.event(shown)
                    if method == "peer/changed", params["event"]?.stringValue == "joined" { linked = true }
                }
            }
        }
    }

    /// Where the files go: `directory` made absolute, or `<current folder>/<project name>`.
    /// Throws a message when something other than a folder is there.
    static func folder(_ directory: String?, projectName: String) throws -> String {
        let current = FileManager.default.currentDirectoryPath
        let given = directory ?? projectName
        var path = given.hasPrefix("/") ? given : (current == "/" ? "" : current) + "/" + given
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw ConsoleFailure("cannot join into \(ConsoleScreen.clean(path, limit: 200)): something other than a folder is there")
        }
        return path
    }
}
