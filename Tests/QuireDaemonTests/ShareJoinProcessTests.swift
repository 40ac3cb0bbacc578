import Foundation
import JSON
import QuireTestSupport
import Testing

/// `quire share` and `quire join` as a person runs them, real processes on loopback: the
/// printed line joins, the tree arrives byte for byte (ignored and binary files left out), an
/// edit made in an editor on either side reaches the other side's disk, and Ctrl-C ends each
/// cleanly.
@Suite(.serialized) struct ShareJoinProcessTests {
    /// A project of 52 text files in nested folders, a `.gitignore` that leaves out a folder and
    /// a pattern, and a binary file. Returns the files a partner must get, by relative path.
    static func makeProject(at root: String) throws -> [String: [UInt8]] {
        var shared: [String: [UInt8]] = [:]
        func write(_ path: String, _ bytes: [UInt8], isShared: Bool) throws {
            let url = URL(fileURLWithPath: root + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            if isShared { shared[path] = bytes }
        }
        try write(".gitignore", Array("build/\n*.log\n".utf8), isShared: true)
        for index in 0..<50 {
            let folder = ["src", "src/core", "src/core/deep/er", "docs", "tests/unit"][index % 5]
            var text = "// file \(index)\n"
            for line in 0..<(index % 7 + 1) { text += "let value\(line) = \(index * line) // héllo ✓\n" }
            try write("\(folder)/file\(index).swift", Array(text.utf8), isShared: true)
        }
        try write("README.md", Array("# sample\n\nno final newline".utf8), isShared: true)
        try write("build/output.txt", Array("built\n".utf8), isShared: false)
        try write("debug.log", Array("noise\n".utf8), isShared: false)
        try write("assets/logo.png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0xFF, 0x00], isShared: false)
        return shared
    }

    /// Every regular file under `root`, by relative path.
    static func files(under root: String) -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return found }
        while let path = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder), !isFolder.boolValue,
                  let data = FileManager.default.contents(atPath: root + "/" + path) else { continue }
            found[path] = Array(data)
        }
        return found
    }

    /// The environment of one side: its own XDG_DATA_HOME, and the editor socket kept in the
    /// data directory (no XDG_RUNTIME_DIR), where the test finds it.
    /// Whether a path of the host's folder is one the project shares (what `makeProject` leaves out is not).
    static func isShared(_ path: String) -> Bool {
        !(path.hasPrefix("build/") || path.hasSuffix(".log") || path.hasPrefix("assets/") || path.hasPrefix(".git/"))
    }

    static func side(_ label: String) -> (data: String, environment: [String: String]) {
        let home = DaemonProcess.temporaryDirectory("quire-\(label)")
        return (home + "/data", ["XDG_DATA_HOME": home + "/xdg", "XDG_RUNTIME_DIR": ""])
    }

    /// An editor attached to the daemon serving `data`'s socket, initialized as `user`.
    static func editor(on data: String, user: String, environment: [String: String]) throws -> DaemonProcess {
        let editor = try DaemonProcess(arguments: ["attach", data + "/editors.sock"], environment: environment)
        editor.send(["jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": ["user": ["name": .string(user)], "capabilities": ["general": ["positionEncodings": ["utf-32"]]]]])
        #expect(editor.reply(to: 1)?["result"] != nil, "\(user)'s editor: \(editor.log)")
        return editor
    }

    /// Opens `file` in `editor` with its text on disk and inserts `insert` at the start of line
    /// `line`; returns the text the file must end with.
    static func type(_ insert: String, atLine line: Int, of file: String, in editor: DaemonProcess, id: Int64) throws -> String {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        editor.send(["jsonrpc": "2.0", "id": .integer(id), "method": "document/open", "params": ["file": .string(file), "text": .string(text)]])
        let opened = try #require(editor.reply(to: id)?["result"], "open \(file): \(editor.messages.suffix(3))")
        let uri = try #require(opened["uri"]?.stringValue)
        #expect(uri.hasPrefix("@"), "a project file is named by the project's key: \(uri)")
        let at: JSONValue = ["line": .integer(Int64(line)), "character": 0]
        editor.send(["jsonrpc": "2.0", "id": .integer(id + 1), "method": "document/edit",
                     "params": ["uri": .string(uri), "revision": 0, "changes": [["range": ["start": at, "end": at], "text": .string(insert)]]]])
        #expect(editor.reply(to: id + 1)?["result"]?["editorRevision"] == 1, "edit \(file): \(editor.messages.suffix(3))")
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[line] = insert + lines[line]
        return lines.joined(separator: "\n")
    }

    @Test func aSharedTreeArrivesWholeEditsReachTheOtherDiskAndCtrlCEndsBoth() throws {
        let root = DaemonProcess.temporaryDirectory("quire-shared") + "/greeter"
        let expected = try Self.makeProject(at: root)
        let (dataA, environmentA) = Self.side("host")
        let (dataB, environmentB) = Self.side("joiner")
        let target = DaemonProcess.temporaryDirectory("quire-joined") + "/copy"

        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0", "--data-dir", dataA], environment: environmentA)
        let printed = share.waitForLine { $0.hasPrefix("    quire join ") }
        let line = try #require(printed, "quire share printed no line: \(share.stdout) \(share.stderr)").dropFirst("    quire join ".count)
        let screen = share.stdout
        #expect(screen.contains("Sharing \"greeter\" from "), "\(screen)")
        #expect(screen.contains(": \(expected.count) files shared."), "\(screen)")
        #expect(screen.contains("assets/logo.png: "), "the binary file is listed as left out: \(screen)")
        #expect(screen.contains("Listening on 127.0.0.1:"), "\(screen)")

        let join = try CommandProcess(arguments: ["join", String(line), target, "--data-dir", dataB], environment: environmentB)
        let done = join.waitForLine(timeout: 60) { $0.contains("files of \"greeter\" are in") }
        #expect(done == "\(expected.count) files of \"greeter\" are in \(target).", "\(join.stdout) \(join.stderr)")
        #expect(join.stdout.hasPrefix("Joining \"greeter\" into \(target)..."))
        #expect(join.stdout.contains("\"greeter\": \(expected.count) of \(expected.count) files on disk"), "plain progress lines off a terminal: \(join.stdout)")
        #expect(share.waitForLine { $0.hasSuffix("joined as a writer.") } != nil, "the host is told who joined, as what (the line makes writers): \(share.stdout)")
        let arrived = Self.files(under: target)
        #expect(arrived.keys.sorted() == expected.keys.sorted())
        // A file is written only once its text arrived, so when quire join says every file is in, they are.
        for (path, bytes) in expected { #expect(arrived[path] == bytes, "\(path) differs when quire join says all files are in") }
        #expect(waitUntil(timeout: 30) { Self.files(under: target) == expected }, "the trees become byte-identical")

        // An edit in an editor on the host reaches the joiner's disk, and one on the joiner the host's.
        let hostEditor = try Self.editor(on: dataA, user: "ann", environment: environmentA)
        let onHost = try Self.type("ann was here ", atLine: 1, of: root + "/src/core/file1.swift", in: hostEditor, id: 2)
        #expect(waitUntil(timeout: 30) { (try? String(contentsOfFile: target + "/src/core/file1.swift", encoding: .utf8)) == onHost },
                "the host's edit reaches the joiner's disk")
        let joinerEditor = try Self.editor(on: dataB, user: "bob", environment: environmentB)
        let onJoiner = try Self.type("bob too ", atLine: 0, of: target + "/docs/file3.swift", in: joinerEditor, id: 2)
        #expect(waitUntil(timeout: 30) { (try? String(contentsOfFile: root + "/docs/file3.swift", encoding: .utf8)) == onJoiner },
                "the joiner's edit reaches the host's disk")

        // Other programs change each disk: a new file, a removed one, a renamed one (as `mv` does),
        // on each side; the other side's tree follows and both end byte-identical.
        let fm = FileManager.default
        try Data("let added = \"s\" // <A17>\n".utf8).write(to: URL(fileURLWithPath: root + "/src/added.swift"))
        try fm.removeItem(atPath: root + "/tests/unit/file4.swift")
        try fm.moveItem(atPath: root + "/src/file0.swift", toPath: root + "/src/core/moved0.swift")
        try Data("f(x)\n".utf8).write(to: URL(fileURLWithPath: target + "/docs/fromjoiner.md"))
        try fm.removeItem(atPath: target + "/src/core/deep/er/file2.swift")
        try fm.moveItem(atPath: target + "/src/core/file6.swift", toPath: target + "/src/file6-renamed.swift")
        #expect(waitUntil(timeout: 60) {
            // The two files open in the editors above are theirs to save (unsaved, the disks differ there).
            let openInEditors: Set<String> = ["src/core/file1.swift", "docs/file3.swift"]
            let here = Self.files(under: root).filter { Self.isShared($0.key) && !openInEditors.contains($0.key) }
            let there = Self.files(under: target).filter { !openInEditors.contains($0.key) }
            return here == there && there["src/added.swift"] != nil && there["src/core/moved0.swift"] != nil && there["tests/unit/file4.swift"] == nil
                && here["docs/fromjoiner.md"] != nil && here["src/file6-renamed.swift"] != nil && here["src/core/deep/er/file2.swift"] == nil
        }, "creates, deletes and renames reach the other disk: \(Set(Self.files(under: root).keys).symmetricDifference(Self.files(under: target).keys).sorted())")

        // A document shared by name on the host (not in the project) is never listed to the joiner.
        hostEditor.send(["jsonrpc": "2.0", "id": 40, "method": "document/open", "params": ["uri": "private-notes", "text": "not for bob\n"]])
        #expect(hostEditor.reply(to: 40)?["result"] != nil)
        joinerEditor.send(["jsonrpc": "2.0", "id": 41, "method": "quire/status", "params": [:]])
        let status = try #require(joinerEditor.reply(to: 41)?["result"], "\(joinerEditor.messages.suffix(2))")
        let names = (status["documents"]?.arrayValue ?? []).compactMap { $0["uri"]?.stringValue }
        #expect(!names.isEmpty && names.allSatisfy { $0.hasPrefix("@") }, "the joiner holds only the project's documents: \(names)")

        // Ctrl-C on each: stops following or sharing, stops the daemon it runs, exit status 0.
        join.send(signal: SIGINT)
        #expect(join.waitForExit() == 0, "\(join.stderr)")
        #expect(join.stdout.hasSuffix("Following \"greeter\" stopped; its files stay where they are.\n"), "\(join.stdout)")
        #expect(share.waitForLine { $0.contains("left") } != nil, "the host is told the partner left: \(share.stdout)")
        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
        #expect(share.stdout.hasSuffix("Sharing \"greeter\" stopped.\n"), "\(share.stdout)")
        for data in [dataA, dataB] {
            #expect(!FileManager.default.fileExists(atPath: data + "/editors.sock"), "the daemon removed its socket as it stopped")
        }
        #expect(hostEditor.waitForExit() == 0 && joinerEditor.waitForExit() == 0, "the editors' bridges end with their daemons")
        #expect(Self.files(under: target)["src/core/file1.swift"].map { String(decoding: $0, as: UTF8.self) } == onHost, "files stay")
    }

    /// `quire join --via CMD`: the joiner's daemon runs `CMD quire peer --stdio` (a local
    /// command standing in for ssh), which reaches the running `quire share` daemon through its
    /// peer socket, and the files arrive that way.
    @Test func joinViaACommandReachesTheRunningShare() throws {
        let root = DaemonProcess.temporaryDirectory("quire-via") + "/via"
        let expected = try Self.makeProject(at: root)
        let hostHome = DaemonProcess.temporaryDirectory("quire-via-host")
        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0"],
                                       environment: ["XDG_DATA_HOME": hostHome, "XDG_RUNTIME_DIR": ""])
        let printed = try #require(share.waitForLine { $0.hasPrefix("    quire join ") }, "\(share.stdout) \(share.stderr)")
        let binaries = DaemonProcess.binary.deletingLastPathComponent().path
        let via = "env PATH=\(binaries):/usr/bin:/bin XDG_DATA_HOME=\(hostHome) XDG_RUNTIME_DIR="
        let target = DaemonProcess.temporaryDirectory("quire-via-joined") + "/copy"
        let join = try CommandProcess(arguments: ["join", String(printed.dropFirst("    quire join ".count)), target, "--via", via],
                                      environment: ["XDG_RUNTIME_DIR": ""])
        #expect(join.waitForLine(timeout: 60) { $0.contains("files of \"via\" are in") } != nil, "\(join.stdout) \(join.stderr)")
        #expect(join.stdout.contains("(command \(via) quire peer --stdio) joined as an owner."), "the joiner is told the host is an owner: \(join.stdout)")
        #expect(share.waitForLine { $0.hasSuffix("(peer socket) joined as a writer.") } != nil, "the host's daemon took the link on its peer socket: \(share.stdout)")
        #expect(waitUntil(timeout: 30) { Self.files(under: target) == expected }, "the trees become byte-identical")
        join.send(signal: SIGINT)
        #expect(join.waitForExit() == 0, "\(join.stderr)")
        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
    }

    /// `--ephemeral`: the daemon keeps nothing on disk, its socket is in a private folder of its
    /// own (under XDG_RUNTIME_DIR), and Ctrl-C removes that folder.
    @Test func anEphemeralShareLeavesNothingBehind() throws {
        let root = DaemonProcess.temporaryDirectory("quire-ephemeral") + "/light"
        _ = try Self.makeProject(at: root)
        let runtime = DaemonProcess.temporaryDirectory("quire-runtime")
        chmod(runtime, 0o700)
        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0", "--ephemeral"],
                                       environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(share.waitForLine { $0.hasPrefix("    quire join qj1-") } != nil, "\(share.stdout) \(share.stderr)")
        #expect(share.stdout.contains("keeps nothing on disk"), "\(share.stdout)")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
        #expect(folders.count == 1 && folders.first?.hasPrefix("quire-console-") == true, "\(folders)")
        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
        #expect(share.stdout.hasSuffix("Sharing \"light\" stopped.\n"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: runtime)) == [], "the private folder is gone")
    }

    /// A daemon already holds the data directory (an editor started it): `quire share` asks it,
    /// and Ctrl-C stops sharing but leaves that daemon running for its editor.
    @Test func shareAsksTheDaemonHoldingTheDataDirectoryAndLeavesItRunning() throws {
        let root = DaemonProcess.temporaryDirectory("quire-held") + "/held"
        let expected = try Self.makeProject(at: root)
        let (data, environment) = Self.side("held")
        let holder = try DaemonProcess(arguments: ["--data-dir", data], environment: environment)
        holder.send(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["user": ["name": "ann"]]])
        #expect(holder.reply(to: 1)?["result"] != nil)
        #expect(waitUntil { FileManager.default.fileExists(atPath: data + "/editors.sock") })

        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0", "--data-dir", data], environment: environment)
        #expect(share.waitForLine { $0.hasPrefix("    quire join qj1-") } != nil, "\(share.stdout) \(share.stderr)")
        #expect(share.stdout.contains(": \(expected.count) files shared."))
        #expect(share.stdout.contains("quire already running"), "\(share.stdout)")
        holder.send(["jsonrpc": "2.0", "id": 2, "method": "project/list"])
        #expect(holder.reply(to: 2)?["result"]?["projects"]?.arrayValue?.count == 1, "the holder shares it")

        // A second `quire share` of the same folder shows the same line; its Ctrl-C leaves the
        // project shared, as the first one still shows it.
        let again = try CommandProcess(arguments: ["share", root, "--data-dir", data], environment: environment)
        #expect(again.waitForLine { $0.contains("was already shared before this command") } != nil, "\(again.stdout) \(again.stderr)")
        #expect(again.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("    quire join ") }
            == share.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("    quire join ") })
        again.send(signal: SIGINT)
        #expect(again.waitForExit() == 0, "\(again.stderr)")
        #expect(again.stdout.hasSuffix("Left \"held\" shared, as it was before.\n"))
        holder.send(["jsonrpc": "2.0", "id": 5, "method": "project/list"])
        #expect(holder.reply(to: 5)?["result"]?["projects"]?.arrayValue?.count == 1, "still shared")

        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
        #expect(share.stdout.hasSuffix("Sharing \"held\" stopped.\n"))
        holder.send(["jsonrpc": "2.0", "id": 6, "method": "project/list"])
        #expect(holder.reply(to: 6)?["result"]?["projects"]?.arrayValue?.isEmpty == true, "stopped by the first one's Ctrl-C")
        holder.send(["jsonrpc": "2.0", "id": 3, "method": "quire/status"])
        #expect(holder.reply(to: 3)?["result"] != nil, "the holder still serves its editor")
        #expect(holder.process.isRunning)
        holder.send(["jsonrpc": "2.0", "id": 4, "method": "shutdown"])
        holder.send(["jsonrpc": "2.0", "method": "exit"])
        #expect(holder.waitForExit() == 0)
    }
}
