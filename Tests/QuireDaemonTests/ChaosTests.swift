import EditingTraces
import Foundation
import JSON
import Testing
import QuireTestSupport

/// Five real `quire` daemons, each with a data directory of its own and a shared secret, linked
/// as a star around `d0` over loopback TCP, a chain (`d0`-`d2`-`d3`) and a pipe (`d1` runs `d4`
/// as `quire peer --stdio` through `--connect-command`). Seven scripted editors (two on `d0` and
/// `d2`, the second through `quire attach`) type punctuation-heavy tokens (`<A17>`, `f(a17)`,
/// `"a17"`, `[a17]`), each unique, in every change form, replace and delete their own earlier
/// tokens, while the test kills daemons with SIGKILL (their editors type on offline and reopen
/// with `reopen()`), cuts and partitions links, and stalls daemons with SIGSTOP.
///
/// A token counts as acknowledged once its edit's reply arrived, or the reopen that carried it
/// was answered. At the end, with every daemon up and every link back (nothing forced: the links
/// come back by themselves or as they were cut), all copies are equal, every editor shows its
/// daemon's text, every acknowledged token nobody deleted is there exactly once and whole, no
/// token whose deletion was acknowledged is, and the tokens an editor typed one after another
/// are in the order typed.
///
/// CI runs seeds 11, 22, 33 and 226 (about 4 s each); QUIRE_CHAOS_SEEDS=5,6,7 runs others
/// instead, QUIRE_SOAK=N runs N steps per seed instead of 300 (and prints the trace;
/// QUIRE_CHAOS_DETAIL=1 adds every edit to it, QUIRE_CHAOS_WATCH=TOKEN where a token is seen).
/// Seeds 1-60 pass, and 101-104 and 115 at 800 steps. What the test found and was fixed:
/// seed 226, a token typed offline (`f(b71)` before `f(f26)`) whose reopen took the `f(` of the
/// token after it (edit-intent rule 0); seed 22, a reopen refused because a stability round had
/// dropped the editor's kept view (now detached: its texts are kept, `DetachedViewTests`).
@Suite(.serialized) struct ChaosTests {
    static let secret = PeerProcessTests.secret

    /// QUIRE_CHAOS_SEEDS=5,6,7 runs those seeds instead (to replay one, or to look further).
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["QUIRE_CHAOS_SEEDS"].map { $0.split(separator: ",").compactMap { UInt64($0) } }
        ?? [11, 22, 33, 226]

    @Test(arguments: ChaosTests.seeds)
    func everyAcknowledgedTokenSurvivesCrashesCutsStallsAndOfflineTyping(seed: UInt64) throws {
        let soak = Int(ProcessInfo.processInfo.environment["QUIRE_SOAK"] ?? "")
        let run = try ChaosRun(seed: seed)
        var passed = false
        defer { run.tearDown(keepFiles: !passed) }
        let started = Date()
        try run.setUp()
        try run.play(steps: soak ?? 300)
        try run.settle()
        let failures = run.check()
        let seconds = Date().timeIntervalSince(started)
        if !failures.isEmpty || soak != nil || ProcessInfo.processInfo.environment["QUIRE_CHAOS_TRACE"] != nil {
            print("chaos seed \(seed): \(String(format: "%.1f", seconds)) s, \(run.acknowledged.count) tokens acknowledged, "
                  + "\(run.deleted.count) deleted\n" + run.trace.joined(separator: "\n"))
        }
        for failure in failures { Issue.record("chaos seed \(seed): \(failure)") }
        passed = failures.isEmpty
    }
}

/// One run of the chaos test: the daemons, links and editors, the faults under way, and what
/// was typed, acknowledged and deleted.
final class ChaosRun {
    /// One `quire` daemon.
    final class Node {
        let name: String
        let dataDirectory: String
        /// Where its second editors attach: `editors.sock` in its data directory, or for the far
        /// end of the pipe the `--socket` it was given.
        let socket: String
        var arguments: [String] = []
        /// Nil for the far end of the pipe, which its parent starts.
        var process: DaemonProcess?
        var pid: Int32 = 0
        var port = 0
        var listens = false
        /// For the far end: the daemon that runs it, its command, and the file the command writes
        /// its pid to.
        var parent: Node?
        var command = ""
        var pidFile = ""
        var child: Node?
        var up = false
        var stalled = false
        /// A crash or stall is under way.
        var faulted = false
        /// What its earlier processes logged (a restart starts a new log).
        var pastLogs = ""
        var logs: String { pastLogs + (process?.log ?? "") }

        init(name: String, dataDirectory: String, socket: String) {
            self.name = name
            self.dataDirectory = dataDirectory
            self.socket = socket
        }
    }

    /// A TCP link, started by `connector`.
    final class Link {
        let connector: Node, listener: Node
        /// The connector's pid when the link was cut by `peer/disconnect`, 0 while it is up.
        var cutBy: Int32 = 0
        init(connector: Node, listener: Node) {
            self.connector = connector
            self.listener = listener
        }
    }

    /// A scripted editor.
    final class Writer {
        let letter: String
        let node: Node
        /// Attached through `quire attach` (a second editor of its daemon) rather than its stdio.
        let attached: Bool
        let editor: TestEditor
        var bridge: DaemonProcess?
        /// Tokens typed (and deletions made) that no reply or reopen acknowledged yet.
        var unacknowledged: [String] = []
        var unacknowledgedDeletions: [String] = []
        /// Its own tokens still in its text, oldest first.
        var own: [String] = []
        /// Tokens whose deletion was acknowledged and that this editor no longer showed at some
        /// point, and tokens seen twice (for the trace: where a token came back or doubled).
        var seenPresent: Set<String> = []
        var seenGone: Set<String> = []
        var reported: Set<String> = []
        var chain: Int?
        var edits = 0
        var online: Bool { node.up && bridgeOK }
        var bridgeOK = true

        init(letter: String, node: Node, attached: Bool, editor: TestEditor) {
            self.letter = letter
            self.node = node
            self.attached = attached
            self.editor = editor
        }
    }

    enum FaultEnd {
        case restart(Node)
        case resume(Node)
        case heal(Link)
    }

    let seed: UInt64
    var random: SeededRandom
    var nodes: [Node] = []
    var links: [Link] = []
    var writers: [Writer] = []
    var ends: [(step: Int, end: FaultEnd)] = []
    var trace: [String] = []
    var problems: [String] = []
    var step = 0

    var acknowledged: Set<String> = []
    var deleted: Set<String> = []
    var deletionsAcknowledged: Set<String> = []
    var chains: [[String]] = []
    var tokenCount = 0
    let root = DaemonProcess.temporaryDirectory("chaos")

    init(seed: UInt64) throws {
        self.seed = seed
        random = SeededRandom(seed: seed)
    }

    /// Faults, and with `detail` every edit: printed when the run fails.
    func note(_ line: String, detail: Bool = false) {
        if detail && !detailed { return }
        trace.append("[\(step)] \(line)")
    }

    let detailed = ProcessInfo.processInfo.environment["QUIRE_CHAOS_DETAIL"] != nil
    var mismatchesSeen: [String: Int] = [:]
    var watchedPlaces: [String: String] = [:]

    /// Notes when a token whose deletion was acknowledged comes back into an editor's text after
    /// it was gone there, or an acknowledged token shows twice.
    func watchTokens(_ writer: Writer) {
        guard detailed else { return }
        let text = writer.editor.string
        if let watched = ProcessInfo.processInfo.environment["QUIRE_CHAOS_WATCH"] {
            let scalars = writer.editor.text
            let places = Self.occurrences(of: watched, in: scalars).map { at in
                String(String.UnicodeScalarView(scalars[max(0, at - 25)..<min(scalars.count, at + watched.unicodeScalars.count + 25)])).debugDescription
            }.joined(separator: " | ")
            if places != watchedPlaces[writer.letter, default: ""] {
                watchedPlaces[writer.letter] = places
                note("WATCH \(watched) in \(writer.letter) (\(writer.node.name), epoch \(writer.editor.epoch) rev \(writer.editor.daemonRevision)): \(places)")
            }
        }
        var counts: [Substring: Int] = [:]
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) { counts[word, default: 0] += 1 }
        for (word, count) in counts where acknowledged.contains(String(word)) {
            writer.seenPresent.insert(String(word))
            if count > 1 && !writer.reported.contains(String(word)) {
                writer.reported.insert(String(word))
                note("TWICE \(word) in \(writer.letter)'s text: \(text.debugDescription)")
            }
        }
        for token in deletionsAcknowledged where !writer.reported.contains(token) {
            if text.contains(token) {
                if writer.seenGone.contains(token) {
                    writer.reported.insert(token)
                    note("CAME BACK \(token) in \(writer.letter)'s text: \(text.debugDescription)")
                }
                writer.seenPresent.insert(token)
            } else if writer.seenPresent.contains(token) {
                writer.seenGone.insert(token)
            }
        }
    }

    /// Notes the first step at which an editor's text stopped matching the hash of its daemon's edits.
    func watchHashes() {
        for writer in writers { watchTokens(writer) }
        for writer in writers where writer.editor.hashMismatches > mismatchesSeen[writer.letter, default: 0] {
            mismatchesSeen[writer.letter] = writer.editor.hashMismatches
            if writer.editor.hashMismatches == 1 {
                let sent = writer.node.up && !writer.node.stalled ? writer.editor.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue ?? "" : "(daemon away)"
                note("HASH MISMATCH at \(writer.letter) on \(writer.node.name): editor \(writer.editor.string.debugDescription) daemon sent \(sent.debugDescription)")
            }
        }
    }

    // MARK: Daemons

    func makeNode(_ name: String) -> Node {
        let directory = root + "/" + name
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let node = Node(name: name, dataDirectory: directory, socket: directory + "/editors.sock")
        nodes.append(node)
        return node
    }

    /// The storage arguments: durability and snapshot size vary with the seed.
    func storageArguments(_ node: Node) -> [String] {
        let durability = Bool.random(using: &random) ? "sync" : "batch"
        let snapshot = Bool.random(using: &random) ? "2048" : "1048576"
        return ["--data-dir", node.dataDirectory, "--durability", durability, "--snapshot-log-bytes", snapshot]
    }

    func setUp() throws {
        let d0 = makeNode("d0"), d1 = makeNode("d1"), d2 = makeNode("d2"), d3 = makeNode("d3")
        let d4 = Node(name: "d4", dataDirectory: root + "/d4", socket: root + "/d4.sock")
        try? FileManager.default.createDirectory(atPath: d4.dataDirectory, withIntermediateDirectories: true)
        nodes.append(d4)
        d4.parent = d1
        d1.child = d4
        d4.pidFile = root + "/d4.pid"
        // The far end reads the secret from a file of its own: a command inherits no QUIRE_SECRET.
        let secretFile = root + "/d4.secret"
        FileManager.default.createFile(atPath: secretFile, contents: Data((PeerTestNetwork.secret + "\n").utf8),
                                       attributes: [.posixPermissions: 0o600])
        d4.command = "echo $$ > '\(d4.pidFile)'; exec '\(DaemonProcess.binary.path)' peer --stdio --user-name d4 --socket '\(d4.socket)' --secret-file '\(secretFile)' "
            + storageArguments(d4).map { "'\($0)'" }.joined(separator: " ")

        d0.listens = true
        d0.arguments = ["--listen", "127.0.0.1:0", "--user-name", "d0"] + storageArguments(d0)
        try start(d0)
        d2.listens = true
        d2.arguments = ["--listen", "127.0.0.1:0", "--connect", "127.0.0.1:\(d0.port)", "--user-name", "d2"] + storageArguments(d2)
        try start(d2)
        d1.arguments = ["--connect", "127.0.0.1:\(d0.port)", "--connect-command", d4.command, "--user-name", "d1"] + storageArguments(d1)
        try start(d1)
        d3.arguments = ["--connect", "127.0.0.1:\(d2.port)", "--user-name", "d3"] + storageArguments(d3)
        try start(d3)
        links = [Link(connector: d1, listener: d0), Link(connector: d2, listener: d0), Link(connector: d3, listener: d2)]

        for (letter, node, attached) in [("a", d0, false), ("b", d0, true), ("c", d1, false), ("d", d2, false),
                                         ("e", d2, true), ("f", d3, false), ("g", d4, true)] {
            let editor: TestEditor
            var bridge: DaemonProcess?
            if attached {
                bridge = try DaemonProcess(arguments: ["attach", node.socket])
                editor = TestEditor(process: bridge!)
            } else {
                editor = TestEditor(process: node.process!)
            }
            let writer = Writer(letter: letter, node: node, attached: attached, editor: editor)
            writer.bridge = bridge
            editor.initialize(user: letter, encodings: [["utf-8"], ["utf-16"], ["utf-32"]].randomElement(using: &random)!)
            writers.append(writer)
        }
        // Ann starts the document; everyone else joins once it reached their daemon.
        let initial = "start <S0> f(s0) \"s0\"\nmiddle [s0] {s0}\nend\n"
        writers[0].editor.open("doc", text: initial)
        for writer in writers.dropFirst() {
            guard waitUntil(timeout: 30, { writer.editor.request("document/list")["result"]?.arrayValue?.contains { $0["uri"] == "doc" } ?? false }) else {
                throw ChaosError("seed \(seed): doc never reached \(writer.node.name)")
            }
            writer.editor.open("doc", text: "")
            guard writer.editor.string == initial else { throw ChaosError("seed \(seed): \(writer.letter) opened \(writer.editor.string.debugDescription)") }
        }
        note("up: d0 star (d1, d2), chain d0-d2-d3, pipe d1|d4; ports d0 \(d0.port), d2 \(d2.port)")
        for node in nodes { note("\(node.name): \(node.parent == nil ? node.arguments.joined(separator: " ") : node.command)") }
    }

    /// Starts `node` (a far end: has its parent run its command again) and waits until it serves.
    func start(_ node: Node) throws {
        if let parent = node.parent {
            try? FileManager.default.removeItem(atPath: node.pidFile)
            try? FileManager.default.removeItem(atPath: node.socket)
            if parent.up {
                let reply = writer(on: parent).editor.request("peer/connect", ["command": .string(node.command)])
                if reply["error"] != nil { problems.append("peer/connect of the pipe refused: \(reply)") }
            }
            try awaitFarEnd(node)
            return
        }
        try? FileManager.default.removeItem(atPath: node.socket)
        if let child = node.child {
            try? FileManager.default.removeItem(atPath: child.pidFile)
            try? FileManager.default.removeItem(atPath: child.socket)
        }
        let process = try DaemonProcess(arguments: node.arguments, environment: ChaosTests.secret)
        node.process = process
        node.pid = process.process.processIdentifier
        if node.listens {
            guard let line = process.waitForLog(containing: "listening for peers on", timeout: 15) else {
                throw ChaosError("seed \(seed): \(node.name) does not listen: \(process.log)")
            }
            if node.port == 0 {
                node.port = Int(line.split(separator: ":").last ?? "") ?? 0
                node.arguments = node.arguments.map { $0 == "127.0.0.1:0" ? "127.0.0.1:\(node.port)" : $0 }
            }
        }
        guard SocketSessionTests.waitForFile(node.socket, timeout: 15) else { throw ChaosError("seed \(seed): \(node.name) has no socket: \(process.log)") }
        node.up = true
        if let child = node.child { try awaitFarEnd(child) }
    }

    func awaitFarEnd(_ node: Node) throws {
        guard SocketSessionTests.waitForFile(node.socket, timeout: 15),
              let text = try? String(contentsOfFile: node.pidFile, encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ChaosError("seed \(seed): the far end \(node.name) did not start: \(node.parent?.process?.log ?? "")")
        }
        node.pid = pid
        node.up = true
    }

    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // The state follows the command name in parentheses.
        guard let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state == "Z" || state == "X"
    }

    /// `entry` of `peer/status` is the TCP link this daemon started to `listener`.
    static func isLink(_ entry: JSONValue, to listener: Node) -> Bool {
        let address = entry["address"]?.stringValue ?? ""
        return address.hasPrefix("tcp to") && address.hasSuffix(":\(listener.port)")
    }

    func writer(on node: Node) -> Writer { writers.first { $0.node === node && !$0.attached } ?? writers.first { $0.node === node }! }

    // MARK: Faults

    /// SIGKILL: `node` (and the far end its pipe runs) go down; their editors go on offline.
    func crash(_ node: Node) {
        // Sometimes an editor's last edit is on its way as the daemon dies: it may or may not
        // have arrived; its reopen settles it.
        for writer in writers where writer.node === node && writer.online && Int.random(in: 0..<3, using: &random) == 0 {
            insert(writer, inFlight: true)
        }
        kill(node.pid, SIGKILL)
        if let process = node.process {
            process.process.waitUntilExit()
            node.pastLogs += process.log
        }
        _ = waitUntil(timeout: 10) { Self.isGone(node.pid) }
        node.up = false
        node.stalled = false
        var down = [node]
        if let child = node.child, child.up {
            if child.stalled { kill(child.pid, SIGCONT); child.stalled = false }
            if !waitUntil(timeout: 10, { Self.isGone(child.pid) }) { problems.append("\(child.name) outlived its pipe") }
            child.up = false
            down.append(child)
        }
        // Each editor reads what its daemon sent before it died, as a client reads to the end of
        // its input, or (one in three) never reads it; from then on it only types (applying a
        // daemon edit after typing offline would place it in a text the daemon never saw).
        for writer in writers where down.contains(where: { $0 === writer.node }) {
            if let bridge = writer.bridge, bridge.waitForExit(timeout: 5) == nil { note("\(writer.letter)'s attach bridge did not end") }
            // QUIRE_CHAOS_ALWAYS_READ=1 keeps the schedule but always reads (to narrow a failure).
            if Int.random(in: 0..<3, using: &random) == 0 && ProcessInfo.processInfo.environment["QUIRE_CHAOS_ALWAYS_READ"] == nil {
                note("\(writer.letter) never reads what \(writer.node.name) sent last")
            } else {
                writer.editor.process?.waitForMessages(Int.max, timeout: 5)
                writer.editor.deliver()
            }
        }
    }

    /// Brings `node` back (with the far end, for `d1`); every editor of a daemon that came back
    /// reopens its document.
    func restart(_ node: Node) throws {
        try start(node)
        var back = [node]
        if let child = node.child { back.append(child) }
        for writer in writers where back.contains(where: { $0 === writer.node }) {
            if writer.attached {
                let bridge = try DaemonProcess(arguments: ["attach", writer.node.socket])
                writer.bridge = bridge
                writer.editor.connect(to: bridge)
            } else {
                writer.editor.connect(to: writer.node.process!)
            }
            writer.editor.initialize(user: writer.letter, encodings: [writer.editor.encoding.rawValue])
            let reply = writer.editor.reopen()
            if reply["result"]?["epoch"] == nil {
                problems.append("\(writer.letter)'s reopen on \(writer.node.name) failed: \(reply)")
                continue
            }
            note("\(writer.letter) reopened on \(writer.node.name): \(writer.unacknowledged.count) tokens, \(writer.unacknowledgedDeletions.count) deletions typed offline")
            acknowledged.formUnion(writer.unacknowledged)
            deletionsAcknowledged.formUnion(writer.unacknowledgedDeletions)
            writer.unacknowledged = []
            writer.unacknowledgedDeletions = []
        }
    }

    /// A TCP link cut by its connector (`peer/disconnect`), to be healed after `steps` steps.
    func partition(_ link: Link, steps: Int) {
        let editor = writer(on: link.connector).editor
        let status = editor.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        guard let entry = status.first(where: { Self.isLink($0, to: link.listener) && $0["state"] == "established" }),
              let id = entry["link"] else { return }
        let reply = editor.request("peer/disconnect", ["link": id])
        if reply["error"] != nil { problems.append("peer/disconnect refused: \(reply)"); return }
        link.cutBy = link.connector.pid
        note(steps == 0 ? "cut \(link.connector.name)->\(link.listener.name)" : "partition \(link.connector.name)->\(link.listener.name) for \(steps) steps")
        if steps == 0 { heal(link) } else { ends.append((step + steps, .heal(link))) }
    }

    /// Reconnects a cut link, unless its connector restarted meanwhile (its `--connect` did).
    /// Returns false when it must wait (its connector is stalled).
    @discardableResult
    func heal(_ link: Link) -> Bool {
        guard link.cutBy != 0 else { return true }
        if link.connector.up && link.connector.pid == link.cutBy {
            if link.connector.stalled { return false }
            let reply = writer(on: link.connector).editor.request("peer/connect", ["host": "127.0.0.1", "port": .integer(Int64(link.listener.port))])
            if reply["error"] != nil { problems.append("peer/connect refused: \(reply)") }
        }
        link.cutBy = 0
        note("healed \(link.connector.name)->\(link.listener.name)")
        return true
    }

    /// SIGCONT: what its editors sent meanwhile (as notifications) is acknowledged by the reply
    /// to their next request, unless the daemon refused it (a `document/editRefused`).
    func resume(_ node: Node) {
        kill(node.pid, SIGCONT)
        node.stalled = false
        node.faulted = false
        note("SIGCONT \(node.name)")
        for writer in writers where writer.node === node {
            guard writer.editor.request("quire/status")["result"] != nil else {
                problems.append("\(writer.letter) had no answer after \(node.name) resumed")
                continue
            }
            let refused = writer.editor.take("document/editRefused")
            if !refused.isEmpty { problems.append("\(writer.letter)'s edits sent during a stall were refused: \(refused)") }
            acknowledged.formUnion(writer.unacknowledged)
            deletionsAcknowledged.formUnion(writer.unacknowledgedDeletions)
            writer.unacknowledged = []
            writer.unacknowledgedDeletions = []
        }
    }

    func startFault() throws {
        let node = nodes.randomElement(using: &random)!
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<3:
            guard node.up, !node.faulted, node.child?.faulted != true else { return }
            if let parent = node.parent, parent.stalled || parent.faulted { return }
            crash(node)
            node.faulted = true
            node.child?.faulted = true
            note("kill -9 \(node.name)")
            try restart(node)
            node.faulted = false
            node.child?.faulted = false
        case 3..<6:
            guard node.up, !node.faulted, node.child?.faulted != true else { return }
            if let parent = node.parent, parent.stalled || parent.faulted { return }
            let steps = Int.random(in: 3...14, using: &random)
            crash(node)
            node.faulted = true
            node.child?.faulted = true
            note("kill -9 \(node.name), offline for \(steps) steps")
            ends.append((step + steps, .restart(node)))
        case 6..<8:
            guard node.up, !node.faulted else { return }
            let steps = Int.random(in: 2...10, using: &random)
            kill(node.pid, SIGSTOP)
            node.stalled = true
            node.faulted = true
            note("SIGSTOP \(node.name) for \(steps) steps")
            ends.append((step + steps, .resume(node)))
        default:
            let link = links.randomElement(using: &random)!
            guard link.cutBy == 0, link.connector.up, !link.connector.stalled, link.listener.up, !link.listener.stalled else { return }
            partition(link, steps: Bool.random(using: &random) ? 0 : Int.random(in: 3...15, using: &random))
        }
    }

    func end(_ end: FaultEnd) throws -> Bool {
        switch end {
        case .restart(let node):
            if node.up {
                node.faulted = false
                return true
            }
            if let parent = node.parent, !parent.up || parent.stalled { return false }
            note("restart \(node.name)")
            try restart(node)
            node.faulted = false
            node.child?.faulted = false
        case .resume(let node):
            resume(node)
        case .heal(let link):
            return heal(link)
        }
        return true
    }

    func endDueFaults(all: Bool = false) throws {
        var index = 0
        while index < ends.count {
            if all || ends[index].step <= step, try end(ends[index].end) {
                ends.remove(at: index)
                index = 0
            } else {
                index += 1
            }
        }
    }

    // MARK: Typing

    static func token(_ letter: String, _ n: Int) -> String {
        switch n % 5 {
        case 0: "<\(letter.uppercased())\(n)>"
        case 1: "f(\(letter)\(n))"
        case 2: "\"\(letter)\(n)\""
        case 3: "[\(letter)\(n)]"
        default: "{\(letter)\(n)}"
        }
    }

    func newToken(_ writer: Writer) -> String {
        tokenCount += 1
        let token = Self.token(writer.letter, tokenCount)
        writer.own.append(token)
        return token
    }

    static func occurrences(of token: String, in text: [Unicode.Scalar]) -> [Int] {
        let needle = Array(token.unicodeScalars)
        guard needle.count <= text.count else { return [] }
        return (0...(text.count - needle.count)).filter { text[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static func occurrences(of token: String, in text: String) -> Int { text.components(separatedBy: token).count - 1 }

    /// Sends or (offline) just makes one change; true when acknowledged.
    @discardableResult
    func change(_ writer: Writer, _ range: Range<Int>, _ replacement: String, forms: [EditIntentTests.Form], inFlight: Bool = false) -> Bool {
        let editor = writer.editor
        if !writer.online {
            note("\(writer.letter) offline \(range) \(replacement.debugDescription)", detail: true)
            editor.text.replaceSubrange(range, with: Array(replacement.unicodeScalars))
            return false
        }
        writer.edits += 1
        note("\(writer.letter) \(inFlight ? "in flight" : "") \(range) \(replacement.debugDescription)", detail: true)
        if inFlight || writer.node.stalled {
            // Sent as a notification: acknowledged by the reply to a later request.
            editor.edit(range, with: replacement, asRequest: false)
            return false
        }
        let form = forms.randomElement(using: &random)!
        let (reply, _) = EditIntentTests.type(editor, range, replacement, as: form, editID: "\(writer.letter)-\(writer.edits)")
        note("  as \(form)", detail: true)
        guard reply["result"]?["editorRevision"] != nil else {
            problems.append("\(writer.letter)'s \(form) edit on \(writer.node.name) was not acknowledged: \(reply)")
            return false
        }
        return true
    }

    /// Types a new token: after its last one, or next to a word it sees, or as a new line.
    func insert(_ writer: Writer, inFlight: Bool = false) {
        let text = writer.editor.text
        let words = TypedTokensSurviveTests.wordRanges(text)
        var range = 0..<0, replacement = "", typed: [String] = []
        var chain: Int?
        if let current = writer.chain, let last = chains[current].last, Bool.random(using: &random),
           case let places = Self.occurrences(of: last, in: text), places.count == 1 {
            let end = places[0] + last.unicodeScalars.count
            range = end..<end
            typed = [newToken(writer)]
            replacement = " " + typed[0]
            chain = current
        } else {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                // A new line of two or three tokens, typed in a row.
                let starts = [0] + text.indices.filter { text[$0] == "\n" }.map { $0 + 1 }.filter { $0 <= text.count }
                let at = starts.randomElement(using: &random) ?? 0
                typed = (0..<Int.random(in: 2...3, using: &random)).map { _ in newToken(writer) }
                range = at..<at
                replacement = typed.joined(separator: " ") + "\n"
                chain = chains.count
                chains.append([])
            case 1:
                guard let word = words.randomElement(using: &random) else { return }
                typed = [newToken(writer)]
                range = word.lowerBound..<word.lowerBound
                replacement = typed[0] + " "
            default:
                guard let word = words.randomElement(using: &random) else { return }
                typed = [newToken(writer)]
                range = word.upperBound..<word.upperBound
                replacement = " " + typed[0]
                chain = chains.count
                chains.append([])
            }
        }
        if let chain {
            chains[chain].append(contentsOf: typed)
            writer.chain = chain
        }
        if change(writer, range, replacement, forms: EditIntentTests.Form.allCases, inFlight: inFlight) {
            acknowledged.formUnion(typed)
        } else {
            writer.unacknowledged.append(contentsOf: typed)
        }
    }

    /// Replaces one of its own tokens with a new one, or deletes it (with a space next to it).
    func replaceOrDelete(_ writer: Writer, delete: Bool) {
        let text = writer.editor.text
        guard let old = writer.own.filter({ Self.occurrences(of: $0, in: text).count == 1 }).randomElement(using: &random) else {
            insert(writer)
            return
        }
        let start = Self.occurrences(of: old, in: text)[0]
        var range = start..<(start + old.unicodeScalars.count)
        writer.own.removeAll { $0 == old }
        deleted.insert(old)
        note("\(writer.letter) \(delete ? "deletes" : "replaces") \(old)", detail: true)
        let replacement: String
        let forms: [EditIntentTests.Form]
        var typed: [String] = []
        if delete {
            if range.lowerBound > 0, text[range.lowerBound - 1] == " " { range = (range.lowerBound - 1)..<range.upperBound }
            else if range.upperBound < text.count, text[range.upperBound] == " " { range = range.lowerBound..<(range.upperBound + 1) }
            replacement = ""
            forms = EditIntentTests.Form.allCases
        } else {
            typed = [newToken(writer)]
            replacement = typed[0]
            // Whole lines or the whole text without a cursor cannot tell a token replaced by
            // another from typing inside it (as in TypedTokensSurviveTests).
            forms = EditIntentTests.Form.allCases.filter { $0 != .lines && $0 != .full }
        }
        if change(writer, range, replacement, forms: forms) {
            acknowledged.formUnion(typed)
            deletionsAcknowledged.insert(old)
        } else {
            writer.unacknowledged.append(contentsOf: typed)
            writer.unacknowledgedDeletions.append(old)
        }
    }

    func act(_ writer: Writer) {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<3: if writer.online { writer.editor.deliver() }
        case 3..<7: insert(writer)
        case 7..<9: replaceOrDelete(writer, delete: false)
        default: replaceOrDelete(writer, delete: true)
        }
    }

    func play(steps: Int) throws {
        while step < steps {
            try endDueFaults()
            if Int.random(in: 0..<100, using: &random) < 7 {
                try startFault()
            } else {
                // Offline editors type more: that is where reopens have work to do.
                let offline = writers.filter { !$0.online }
                act(!offline.isEmpty && Bool.random(using: &random) ? offline.randomElement(using: &random)! : writers.randomElement(using: &random)!)
            }
            watchHashes()
            step += 1
            usleep(3_000)
        }
    }

    // MARK: The end

    /// Ends every fault (the far end last), then waits for every link to be established.
    func settle() throws {
        for node in nodes where node.stalled { resume(node) }
        ends.removeAll { if case .resume = $0.end { true } else { false } }
        // Restarts first (a far end needs its parent up), then heals.
        for node in nodes where node.parent == nil && !node.up {
            note("restart \(node.name)")
            try restart(node)
        }
        for node in nodes where !node.up {
            note("restart \(node.name)")
            try restart(node)
        }
        ends.removeAll { if case .restart = $0.end { true } else { false } }
        try endDueFaults(all: true)
        for node in nodes { node.faulted = false }
        let linked = waitUntil(timeout: 45) {
            links.allSatisfy { link in
                writer(on: link.connector).editor.request("peer/status")["result"]?["links"]?.arrayValue?
                    .contains { Self.isLink($0, to: link.listener) && $0["state"] == "established" } ?? false
            } && writer(on: nodes[1]).editor.request("peer/status")["result"]?["links"]?.arrayValue?
                .contains { ($0["address"]?.stringValue ?? "").hasPrefix("command") && $0["state"] == "established" } ?? false
        }
        if !linked { problems.append("not every link came back within 45 s") }
        note("all links up")
    }

    /// Waits for every copy and every editor to agree; returns what failed.
    func check() -> [String] {
        var failures = problems
        var texts: [String: String] = [:]
        let converged = waitUntil(timeout: 40) {
            for writer in writers {
                writer.editor.request("quire/status")
                writer.editor.deliver()
                watchTokens(writer)
            }
            texts = [:]
            for node in nodes {
                texts[node.name] = writer(on: node).editor.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue ?? "<no text>"
            }
            return Set(texts.values).count == 1 && writers.allSatisfy { $0.editor.string == texts[$0.node.name] }
        }
        if !converged {
            for node in nodes { failures.append("\(node.name) holds \(texts[node.name]?.debugDescription ?? "nothing")") }
            for writer in writers where writer.editor.string != texts[writer.node.name] {
                failures.append("editor \(writer.letter) shows \(writer.editor.string.debugDescription), \(writer.node.name) sent \(texts[writer.node.name]?.debugDescription ?? "")")
            }
            failures.insert("the copies did not converge within 40 s", at: 0)
        }
        for writer in writers where writer.editor.hashMismatches > 0 {
            failures.append("editor \(writer.letter) saw \(writer.editor.hashMismatches) hash mismatches")
        }
        let final = texts["d0"] ?? ""
        for token in acknowledged.subtracting(deleted).sorted() {
            let count = Self.occurrences(of: token, in: final)
            if count != 1 { failures.append("\(token), acknowledged and never deleted, is there \(count) times") }
        }
        for token in deletionsAcknowledged.sorted() where Self.occurrences(of: token, in: final) > 0 {
            failures.append("\(token), deleted (acknowledged), is still there")
        }
        for chain in chains where chain.count > 1 {
            let kept = chain.filter { acknowledged.contains($0) && !deleted.contains($0) }
            let places = kept.compactMap { final.range(of: $0)?.lowerBound }
            if places != places.sorted() { failures.append("\(kept), typed in a row, are out of order") }
        }
        if !failures.isEmpty {
            failures.append("final text \(final.debugDescription)")
            // The far end logs into its parent's stderr.
            for node in nodes where node.parent == nil {
                let lines = node.logs.split(separator: "\n").filter { $0.contains("view") || $0.contains("error") || $0.contains("merges as text") }
                if !lines.isEmpty { failures.append("\(node.name) logged:\n" + lines.suffix(12).joined(separator: "\n")) }
            }
        }
        return failures
    }

    func tearDown(keepFiles: Bool) {
        for node in nodes where node.stalled { kill(node.pid, SIGCONT) }
        for writer in writers { writer.bridge?.process.terminate() }
        for node in nodes where node.parent == nil {
            if let process = node.process, process.process.isRunning {
                process.process.terminate()
                _ = process.waitForExit(timeout: 10)
            }
        }
        for node in nodes where node.parent != nil && !Self.isGone(node.pid) && node.pid > 0 {
            _ = waitUntil(timeout: 5) { Self.isGone(node.pid) }
        }
        if !keepFiles { try? FileManager.default.removeItem(atPath: root) }
    }
}

struct ChaosError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
