import ArgumentParser
import Foundation
import JSON
import QuireConsole
import QuireDaemon
import QuireProtocol

/// The quire already running for a data directory, reached on its editor socket, as `quire
/// invite`, `quire members`, `quire role` and `quire revoke` talk to it: they never start a
/// daemon (a project is shared or followed by one that runs: `quire share`, `quire join`, an
/// editor's), and they ask it which project a folder is in (`project/list`).
///
/// Guarantees: every failure is a `ConsoleFailure` worded for the person (no daemon running, a
/// folder in no shared project, the daemon's refusal with its cleaned reason); nothing is sent
/// to a socket of another user's (`DaemonSocket`).
struct RunningDaemon {
    let console: DaemonConsole
    /// The command as it names itself (`quire invite`).
    let clientName: String

    /// Connects to the daemon holding `dataDirectory` (default: the usual one) and introduces
    /// this command to it.
    init(dataDirectory: String?, clientName: String) throws {
        self.clientName = clientName
        guard let data = dataDirectory.map(Self.absolute) ?? StorageOptions.defaultDataDir else {
            throw ConsoleFailure("no data directory (HOME and XDG_DATA_HOME are unset): pass --data-dir, the one `quire share` or `quire join` runs with")
        }
        let socket = EditorSocketLocation(dataDirectory: data).socketPath
        let shownData = ConsoleScreen.clean(data, limit: 200)
        do {
            console = try DaemonConsole(socketPath: socket, onNotification: { _, _ in }, onClose: { _ in })
        } catch .cannotConnect {
            throw ConsoleFailure("no quire is running for the data directory \(shownData): share a project with `quire share` "
                + "or join one with `quire join` first (or pass the --data-dir they run with)")
        } catch {
            throw ConsoleFailure("\(error)")
        }
        do {
            _ = try console.request("initialize", ["protocolVersion": 1, "clientInfo": ["name": .string(clientName), "version": .string(Quire.version)]],
                                    timeout: 10)
            console.notify("initialized")
        } catch {
            console.close()
            throw ConsoleFailure("\(error)")
        }
    }

    /// The project whose root is `folder` or holds it, or the file shared by itself that it
    /// names (default: the current folder).
    func project(holding folder: String?) throws -> ListedProject {
        let path = try Self.resolvedFolder(folder)
        do {
            return try ListedProject.holding(path, in: ListedProject.list(reply: request("project/list")))
        } catch let error as ConsoleArgumentError {
            throw ConsoleFailure(error.description)
        }
    }

    /// Sends `method` and waits for its result. A refusal by the daemon reads as the daemon's
    /// own reason (cleaned), which names what was wrong: not an owner, no such member, a name
    /// that more than one member has.
    func request(_ method: String, _ params: JSONValue = .object([:])) throws -> JSONValue {
        do {
            return try console.request(method, params, timeout: 30)
        } catch .refused(_, let error) where error.code != ResponseError.methodNotFoundCode {
            throw ConsoleFailure(ConsoleScreen.refusal(error.message))
        } catch {
            throw ConsoleFailure("\(error)")
        }
    }

    func close() { console.close() }

    /// `folder` (or the current folder) made absolute with its links resolved; throws when it is
    /// not a folder or a regular file (a file shared by itself).
    static func resolvedFolder(_ folder: String?) throws -> String {
        let given = folder.map(absolute) ?? FileManager.default.currentDirectoryPath
        guard let resolved = realpath(given, nil) else {
            throw ConsoleFailure("cannot use \(ConsoleScreen.clean(given, limit: 200)): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        let path = String(cString: resolved)
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR || info.st_mode & S_IFMT == S_IFREG else {
            throw ConsoleFailure("\(ConsoleScreen.clean(given, limit: 200)) is not a folder or a file: name the project's folder, one in it, or a file shared by itself")
        }
        return path
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Runs `body` with the daemon for `dataDirectory`; prints a failure as `clientName: ...` on
    /// stderr and exits 1.
    static func run(dataDirectory: String?, clientName: String, _ body: (RunningDaemon) throws -> Void) throws {
        signal(SIGPIPE, SIG_IGN)
        do {
            let daemon = try RunningDaemon(dataDirectory: dataDirectory, clientName: clientName)
            defer { daemon.close() }
            try body(daemon)
        } catch {
            FileHandle.standardError.write(Data("\(clientName): \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// Writes `lines` to stdout (what can be piped) or stderr, one per line.
func printLines(_ lines: [String], toStandardError: Bool = false) {
    let text = lines.map { $0 + "\n" }.joined()
    (toStandardError ? FileHandle.standardError : FileHandle.standardOutput).write(Data(text.utf8))
}
