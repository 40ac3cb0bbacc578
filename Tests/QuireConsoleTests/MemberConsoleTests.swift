import Foundation
import JSON
import QuireConsole
import QuireProject
import QuireTestSupport
import Testing

/// `quire invite`, `quire members`, `quire role` and `quire revoke`: their arguments, the
/// project a folder is in, and the words they print (protocol/decisions/roles.md).
@Suite struct MemberArgumentsTests {
    @Test func rolesAreReadWriteOrOwner() throws {
        #expect(try MemberArguments.role("read") == "read")
        #expect(try MemberArguments.role(" Owner ") == "owner")
        for wrong in ["reader", "", "admin", "w"] {
            #expect(throws: ConsoleArgumentError.self) { try MemberArguments.role(wrong) }
        }
        do {
            _ = try MemberArguments.role("r\u{1B}[2Jx")
            Issue.record("must be refused")
        } catch {
            #expect(error.description.contains("is no role: a role is read") && !error.description.contains("\u{1B}"))
        }
    }

    @Test func expiriesAreANumberAndAUnitUpToThirtyDays() throws {
        #expect(try MemberArguments.expiry("90s") == 90)
        #expect(try MemberArguments.expiry("30m") == 1800)
        #expect(try MemberArguments.expiry("2h") == 7200)
        #expect(try MemberArguments.expiry("7d") == 7 * 86_400)
        #expect(try MemberArguments.expiry("30d") == 30 * 86_400)
        #expect(try MemberArguments.expiry("720h") == 30 * 86_400)
        for wrong in ["31d", "721h", "0m", "1w", "h", "30", "-1h", "1.5h", "99999999999999d", " ", "1h30m"] {
            #expect(throws: ConsoleArgumentError.self, "\(wrong)") { try MemberArguments.expiry(wrong) }
        }
    }

    @Test func membersAreNamesOrFingerprintsWithoutControlCharacters() throws {
        #expect(try MemberArguments.member(" bob ") == "bob")
        #expect(try MemberArguments.member("3f1c-0a9e") == "3f1c-0a9e")
        for wrong in ["", "   ", "bo\nb", "b\u{1B}ob", String(repeating: "b", count: 201)] {
            #expect(throws: ConsoleArgumentError.self) { try MemberArguments.member(wrong) }
        }
    }

    @Test func aFoldersProjectIsTheDeepestRootHoldingIt() throws {
        let reply: JSONValue = ["projects": [
            ["key": "00000000000000aa", "name": "outer", "root": "/home/ann/work", "role": "host", "files": 3, "links": 0],
            ["key": "00000000000000bb", "name": "inner", "root": "/home/ann/work/lib", "role": "joined", "files": 1, "links": 1],
            ["key": "NOT A KEY", "name": "broken", "root": "/home/ann"],
            ["key": "00000000000000cc", "name": "relative", "root": "work"],
        ]]
        let projects = try ListedProject.list(reply: reply)
        #expect(projects.map(\.name) == ["outer", "inner"], "entries without a key or an absolute root are left out")
        #expect(try ListedProject.holding("/home/ann/work", in: projects).key == "00000000000000aa")
        #expect(try ListedProject.holding("/home/ann/work/src/deep", in: projects).key == "00000000000000aa")
        #expect(try ListedProject.holding("/home/ann/work/lib/x", in: projects).key == "00000000000000bb")
        do {
            _ = try ListedProject.holding("/home/ann/workshop", in: projects)
            Issue.record("a folder whose name only starts like a root is not in it")
        } catch {
            #expect(error.description.contains("is in no project the quire running shares or follows"))
            #expect(error.description.contains("\"outer\" (/home/ann/work)"))
        }
        #expect(throws: ConsoleArgumentError.self) { try ListedProject.holding("/home/ann/work", in: []) }
        #expect(throws: ConsoleError.self) { try ListedProject.list(reply: ["nothing": 1]) }
    }

    /// A file shared by itself is found by naming it, or from its folder when it is the one file
    /// shared there; a folder project holding the path comes first; a `file` outside its root is
    /// not believed.
    @Test func aFileSharedByItselfIsFoundByItsPathOrItsFolder() throws {
        let reply: JSONValue = ["projects": [
            ["key": "00000000000000aa", "name": "plan.md", "root": "/home/ann/notes", "file": "/home/ann/notes/plan.md"],
            ["key": "00000000000000bb", "name": "todo.md", "root": "/home/ann/lists", "file": "/home/ann/lists/todo.md"],
            ["key": "00000000000000cc", "name": "diary.md", "root": "/home/ann/lists", "file": "/home/ann/lists/diary.md"],
            ["key": "00000000000000dd", "name": "work", "root": "/home/ann/work"],
            ["key": "00000000000000ee", "name": "liar", "root": "/home/ann/liar", "file": "/etc/passwd"],
        ]]
        let projects = try ListedProject.list(reply: reply)
        #expect(projects.map(\.file) == ["/home/ann/notes/plan.md", "/home/ann/lists/todo.md", "/home/ann/lists/diary.md", nil, nil])
        #expect(projects.first?.shownRoot == "/home/ann/notes/plan.md")
        #expect(try ListedProject.holding("/home/ann/notes/plan.md", in: projects).key == "00000000000000aa")
        #expect(try ListedProject.holding("/home/ann/notes", in: projects).key == "00000000000000aa", "the one file shared in that folder")
        #expect(try ListedProject.holding("/home/ann/lists/diary.md", in: projects).key == "00000000000000cc")
        #expect(try ListedProject.holding("/home/ann/work/plan.md", in: projects).key == "00000000000000dd")
        do {
            _ = try ListedProject.holding("/home/ann/lists", in: projects)
            Issue.record("two files shared by themselves in one folder: name one")
        } catch {
            #expect(error.description.contains("files in it are shared by themselves") && error.description.contains("name the file"), "\(error)")
        }
        #expect(throws: ConsoleArgumentError.self) { try ListedProject.holding("/home/ann/notes/other.md", in: projects) }
    }
}

@Suite struct MemberScreenTests {
    static let line = try! JoinLine(name: "greeter", addresses: [PeerAddress("192.168.1.20:7070")],
                                    secret: Array(repeating: 9, count: 30), fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345")

    @Test func theMemberListShowsNameRoleOnlineFingerprintAndYou() throws {
        let reply: JSONValue = ["members": [
            ["fingerprint": "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345", "name": "ann", "role": "owner", "online": true, "you": true],
            ["fingerprint": "77aa-0a9e-77b2-10ff-0000-abcd-ef01-2345", "name": "bob", "role": "read", "online": false, "you": false],
            ["fingerprint": "99bb-0a9e-77b2-10ff-0000-abcd-ef01-2345", "name": "mal\u{1B}[2Jlory", "online": false, "you": false],
            ["fingerprint": "aaaa-0a9e-77b2-10ff-0000-abcd-ef01-2345", "role": "admin", "online": true],
        ]]
        let members = try ProjectMember.list(reply: reply)
        let screen = ConsoleScreen.members(members, project: "greeter")
        #expect(screen.first == "\"greeter\": 2 members, 2 removed.")
        #expect(screen[1] == "  ann         owner    online   3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345  (you)")
        #expect(screen[2] == "  bob         read     offline  77aa-0a9e-77b2-10ff-0000-abcd-ef01-2345")
        #expect(screen[3] == "  mal[2Jlory  removed  offline  99bb-0a9e-77b2-10ff-0000-abcd-ef01-2345", "cleaned")
        #expect(screen[4].hasPrefix("  ?           removed  online "), "a role the console does not know reads as none: \(screen[4])")
        #expect(throws: ConsoleError.self) { try ProjectMember.list(reply: ["members": [["name": "nokey"]]]) }
    }

    @Test func anInvitationSaysWhatItAllowsHowOftenAndUntilWhen() throws {
        let reply: JSONValue = ["line": .string(Self.line.encoded), "role": "read", "once": true, "expires": 1_795_000_000]
        let invitation = try InvitationLine(reply: reply)
        #expect(invitation.line == Self.line.encoded && invitation.once && invitation.expires == 1_795_000_000)
        let words = ConsoleScreen.invited(invitation, project: "greeter", expiresIn: 3600)
        #expect(words[0] == "This line lets the first person who runs `quire join` with it into \"greeter\" as a reader: "
            + "sees the text and the cursors and can follow, but cannot change anything.")
        #expect(words[1] == "It works once: whoever joins with it first uses it up.")
        #expect(words[2] == "It expires in 1 hour (2026-11-18 11:06 UTC); whoever joined by then stays a member.")
        let lasting = try InvitationLine(reply: ["line": .string(Self.line.encoded), "role": "write", "once": false])
        let forever = ConsoleScreen.invited(lasting, project: "greeter", expiresIn: nil)
        #expect(forever[0].contains("lets anyone who runs") && forever[0].contains("as a writer"))
        #expect(forever.contains("It does not expire (`--expires 1h` makes one that does)."))
        #expect(throws: ConsoleError.self) { try InvitationLine(reply: ["line": "qj1-cut", "role": "read"]) }
        #expect(throws: ConsoleError.self) { try InvitationLine(reply: ["line": .string(Self.line.encoded), "role": "boss"]) }
    }

    @Test func roleChangesRevocationsAndRemovalReadAsSentences() throws {
        let bob = try ProjectMember(json: ["fingerprint": "77aa-0a9e", "name": "bob", "role": "write", "online": true], method: "project/role")
        #expect(ConsoleScreen.roleChanged(bob, project: "greeter") == "bob (77aa-0a9e) is now a writer of \"greeter\": sees and edits the files.")
        let gone = try ProjectMember(json: ["fingerprint": "77aa-0a9e", "name": "bob", "online": false], method: "project/revoke")
        #expect(ConsoleScreen.revoked(gone, project: "greeter").first == "bob (77aa-0a9e) was removed from \"greeter\".")
        let key = "3fa29c1b00d4e6f1"
        #expect(ConsoleScreen.liveLine(method: "project/removed", params: ["key": .string(key), "name": "greeter", "reason": ""], key: key)
            == "You were removed from \"greeter\" by an owner.")
        #expect(ConsoleScreen.liveLine(method: "project/removed", params: ["key": .string(key), "name": "greeter",
                                                                    "reason": "removed from project greeter by an owner\u{1B}[2J"], key: key)
            == "You are no longer in \"greeter\": removed from project greeter by an owner[2J.")
        #expect(ConsoleScreen.liveLine(method: "project/removed", params: ["key": "0000000000000000", "name": "other"], key: key) == nil)
        #expect(ConsoleScreen.endedRemoved("greeter", sharing: false).hasPrefix("Following \"greeter\" ended: you are no longer in it."))
    }

    @Test func aDaemonsRefusalReadsWithoutTheProtocolsWording() {
        #expect(ConsoleScreen.refusal("Invalid params: params.member: no member of project greeter is named bob")
            == "no member of project greeter is named bob")
        #expect(ConsoleScreen.refusal("Invalid params: project/role: only an owner of project greeter changes roles")
            == "project/role: only an owner of project greeter changes roles")
        #expect(ConsoleScreen.refusal("params.x y: kept as it is") == "params.x y: kept as it is")
        #expect(ConsoleScreen.refusal("Invalid params: \u{1B}[2Jgone\n") == "[2Jgone")
        #expect(ConsoleScreen.refusal(String(repeating: "r", count: 5000)).count == 400)
    }

    @Test func anAuthenticationFailureOnTheLinesOwnAddressIsTheLineRefused() {
        let failed: JSONValue = ["event": "failed", "link": 1, "user": "", "address": "tcp to 127.0.0.1:7070",
                                 "reason": "authentication failed: the peer refused our proof of the secret", "linksUp": 0]
        #expect(ConsoleScreen.isLineRefused(failed, targets: ["127.0.0.1:7070"]))
        #expect(!ConsoleScreen.isLineRefused(failed, targets: ["10.0.0.2:7070"]), "another daemon's failure is not this line's")
        #expect(!ConsoleScreen.isLineRefused(failed, targets: [""]))
        var refusedOther = failed
        if case .object(var members) = refusedOther { members["reason"] = "connection refused"; refusedOther = .object(members) }
        #expect(!ConsoleScreen.isLineRefused(refusedOther, targets: ["127.0.0.1:7070"]), "a connection that failed may work later")
        let via: JSONValue = ["event": "failed", "link": 1, "address": "command ssh ann@host quire peer --stdio", "reason": "authentication failed: wrong secret"]
        #expect(ConsoleScreen.isLineRefused(via, targets: ["127.0.0.1:7070", "ssh ann@host"]))
        #expect(!ConsoleScreen.isLineRefused(["event": "joined", "address": "tcp to 127.0.0.1:7070"], targets: ["127.0.0.1:7070"]))
    }

    @Test func whoJoinedIsShownWithTheRoleTheirLinkHas() {
        let joined: JSONValue = ["event": "joined", "link": 2, "user": "bob", "address": "10.0.0.2:50123", "linksUp": 1]
        #expect(ConsoleScreen.peerChanged(joined, role: "read") == "bob (10.0.0.2:50123) joined as a reader.")
        #expect(ConsoleScreen.peerChanged(joined, role: "owner") == "bob (10.0.0.2:50123) joined as an owner.")
        #expect(ConsoleScreen.peerChanged(joined, role: nil) == "bob (10.0.0.2:50123) joined.")
        #expect(ConsoleScreen.peerChanged(joined, role: "god\u{1B}") == "bob (10.0.0.2:50123) joined.", "an unknown role is not shown")
        #expect(ConsoleScreen.liveLine(method: "peer/changed", params: joined, key: "k", role: "write") == "bob (10.0.0.2:50123) joined as a writer.")
    }
}

/// The commands as a person runs them, without a daemon or with arguments that cannot be used:
/// a specific message on stderr, nothing on stdout, and a non-zero status; no daemon started.
@Suite struct MemberCommandTests {
    @Test(arguments: [["members"], ["invite", "--role", "read", "--once"], ["role", "bob", "write"], ["revoke", "bob"]])
    func withNoDaemonRunningEachCommandSaysSo(_ arguments: [String]) throws {
        let result = try ConsoleCommandTests.refusal(arguments)
        #expect(result.status == 1, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("quire \(arguments[0]): no quire is running for the data directory "), "\(result.stderr)")
        #expect(!result.madeData, "\(arguments): these commands never start a daemon")
    }

    @Test(arguments: [
        (["invite", "--role", "admin"], "\"admin\" is no role"),
        (["invite", "--expires", "2w"], "--expires \"2w\": a duration is"),
        (["role", "bob", "boss"], "\"boss\" is no role"),
        (["role", "bob"], "Missing expected argument '<role>'"),
        (["revoke", "  "], "name a member by the name or the fingerprint"),
    ])
    func badArgumentsAreUsageErrors(_ arguments: [String], message: String) throws {
        let result = try ConsoleCommandTests.refusal(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
}

/// `quire join` against a daemon that says on cue what a real one says when roles change: who
/// joined is shown with the role `peer/status` gives their link, and `project/removed` ends the
/// command with status 1, saying why, its files left as they are.
@Suite(.serialized) struct RemovedJoinTests {
    static let key = "3fa29c1b00d4e6f1"

    @Test func aJoinShowsWhoJoinedAsWhatAndEndsWhenRemoved() throws {
        let line = try JoinLine(name: "greeter", addresses: [PeerAddress("127.0.0.1:9")],
                                secret: Array(repeating: 7, count: 30), fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345").encoded
        let home = DaemonProcess.temporaryDirectory("quire-removed")
        let target = home + "/copy"
        let project: JSONValue = ["key": .string(Self.key), "name": "greeter"]
        let daemon = try ScriptedDaemon(dataDirectory: home + "/data") { method, _ in
            switch method {
            case "project/list": return (["projects": []], [])
            case "project/join":
                return (["key": .string(Self.key), "name": "greeter", "directory": .string(target), "files": 0],
                        [("peer/changed", ["event": "joined", "link": 3, "user": "ann", "address": "tcp to 127.0.0.1:9", "linksUp": 1])])
            case "peer/status":
                return (["replica": "1", "fingerprint": "x", "listening": [], "documents": [],
                         "links": [["link": 3, "state": "established", "scope": .string("project \(Self.key)"), "role": "owner"]]],
                        [("project/progress", ["key": .string(Self.key), "name": "greeter", "files": 1, "written": 1, "bytes": 10]),
                         ("project/removed", ["key": .string(Self.key), "name": "greeter", "reason": "removed from project greeter by an owner"]),
                         ("project/removed", project)])
            default: return (.null, [])
            }
        }
        defer { daemon.close() }
        let join = try CommandProcess(arguments: ["join", line, target, "--data-dir", home + "/data"], environment: ["XDG_RUNTIME_DIR": ""])
        #expect(join.waitForExit(timeout: 60) == 1, "\(join.stdout) \(join.stderr)")
        let shown = join.stdout
        #expect(shown.contains("  ann (tcp to 127.0.0.1:9) joined as an owner.\n"), "\(shown)")
        #expect(shown.contains("  You are no longer in \"greeter\": removed from project greeter by an owner.\n"), "\(shown)")
        #expect(shown.hasSuffix("Following \"greeter\" ended: you are no longer in it. Its files stay where they are; nothing new arrives.\n"), "\(shown)")
        #expect(join.stderr.contains("quire join: You are no longer in \"greeter\": removed from project greeter by an owner."), "\(join.stderr)")
        #expect(!daemon.requests.contains("project/stop"), "the daemon stopped the project itself: \(daemon.requests)")
        #expect(daemon.requests.prefix(4) == ["initialize", "initialized", "project/list", "project/join"], "\(daemon.requests)")
    }
}

extension RemovedJoinTests {
    /// A line the sharing daemon no longer takes (a `--once` line used already): the attempt
    /// fails authentication on the line's own address, and the join ends at once, saying why,
    /// and stops following the project (the daemon would dial on in vain).
    @Test func aRefusedLineEndsTheJoinSayingWhy() throws {
        let line = try JoinLine(name: "greeter", addresses: [PeerAddress("127.0.0.1:9")],
                                secret: Array(repeating: 7, count: 30), fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345").encoded
        let home = DaemonProcess.temporaryDirectory("quire-refused")
        let daemon = try ScriptedDaemon(dataDirectory: home + "/data") { method, _ in
            switch method {
            case "project/list": return (["projects": []], [])
            case "project/join":
                return (["key": .string(Self.key), "name": "greeter", "directory": .string(home + "/copy"), "files": 0],
                        [("peer/changed", ["event": "failed", "link": 1, "user": "", "address": "tcp to 127.0.0.9:9",
                                           "reason": "authentication failed: another daemon", "linksUp": 0]),
                         ("peer/changed", ["event": "failed", "link": 2, "user": "", "address": "tcp to 127.0.0.1:9",
                                           "reason": "authentication failed: the peer refused our proof of the secret", "linksUp": 0])])
            default: return (.null, [])
            }
        }
        defer { daemon.close() }
        let join = try CommandProcess(arguments: ["join", line, home + "/copy", "--data-dir", home + "/data"], environment: ["XDG_RUNTIME_DIR": ""])
        #expect(join.waitForExit(timeout: 60) == 1, "\(join.stdout) \(join.stderr)")
        #expect(join.stderr.contains("quire join: The sharing daemon does not take this line: it was used already (a --once line)"), "\(join.stderr)")
        #expect(join.stdout.contains("Authentication failed: another daemon (tcp to 127.0.0.9:9)."), "another address's failure is shown, not taken for the line's: \(join.stdout)")
        #expect(join.stdout.hasSuffix("Joining \"greeter\" stopped: the line was refused.\n"), "\(join.stdout)")
        #expect(daemon.requests.contains("project/stop"), "the daemon stops dialing with it: \(daemon.requests)")
    }

    /// Through a relay a used-up line is never refused (the relay pairs no one with it): with no
    /// link after a while, the join says so once and keeps trying until Ctrl-C.
    @Test func aJoinWithNoLinkForAWhileSaysSoOnceAndKeepsTrying() throws {
        let line = try JoinLine(name: "greeter", addresses: [], secret: Array(repeating: 7, count: 30),
                                fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345", relay: PeerAddress("127.0.0.1:9")).encoded
        let home = DaemonProcess.temporaryDirectory("quire-no-link")
        let daemon = try ScriptedDaemon(dataDirectory: home + "/data") { method, _ in
            switch method {
            case "project/list": return (["projects": []], [])
            case "project/join": return (["key": .string(Self.key), "name": "greeter", "directory": .string(home + "/copy"), "files": 0], [])
            default: return (.null, [])
            }
        }
        defer { daemon.close() }
        let join = try CommandProcess(arguments: ["join", line, home + "/copy", "--data-dir", home + "/data"], environment: ["XDG_RUNTIME_DIR": ""])
        let note = join.waitForLine(timeout: 60) { $0.contains("No link to the host") }
        #expect(note?.contains("No link to the host of \"greeter\" after 15 s: it may not be running, or this line was used up or has expired") == true,
                "\(join.stdout) \(join.stderr)")
        join.send(signal: SIGINT)
        #expect(join.waitForExit(timeout: 30) == 0, "\(join.stdout) \(join.stderr)")
        #expect(join.stdout.components(separatedBy: "No link to the host").count == 2, "said once: \(join.stdout)")
        #expect(daemon.requests.contains("project/stop"), "\(daemon.requests)")
    }
}

/// The member commands against a daemon that answers as the roster does: what each sends, what
/// it prints where, and a refusal shown with the daemon's reason.
@Suite(.serialized) struct MemberCommandDaemonTests {
    static let key = "3fa29c1b00d4e6f1"
    static let line = try! JoinLine(name: "greeter", addresses: [PeerAddress("127.0.0.1:9")],
                                    secret: Array(repeating: 5, count: 30), fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345").encoded

    /// A project folder (and a folder in it), and a scripted daemon holding a data directory
    /// that shares it.
    static func setUp(_ answer: @escaping ScriptedDaemon.Answer) throws -> (root: String, data: String, daemon: ScriptedDaemon) {
        let home = DaemonProcess.temporaryDirectory("quire-member-commands")
        let root = home + "/greeter"
        try FileManager.default.createDirectory(atPath: root + "/src/deep", withIntermediateDirectories: true)
        let daemon = try ScriptedDaemon(dataDirectory: home + "/data") { method, params in
            if method == "project/list" {
                return (["projects": [["key": .string(key), "name": "greeter", "root": .string(root), "role": "host", "files": 1, "links": 1]]], [])
            }
            return answer(method, params)
        }
        return (root, home + "/data", daemon)
    }

    static func run(_ arguments: [String], in directory: String) throws -> (status: Int32?, stdout: String, stderr: String) {
        let command = try CommandProcess(arguments: arguments, environment: ["XDG_RUNTIME_DIR": ""], directory: directory)
        let status = command.waitForExit(timeout: 30)
        return (status, command.stdout, command.stderr)
    }

    @Test func inviteAsksForTheRoleOnceAndExpiryAndPrintsTheLineAloneOnStdout() throws {
        let (root, data, daemon) = try Self.setUp { method, params in
            guard method == "project/invite" else { return (.null, []) }
            return (["line": .string(Self.line), "role": params["role"] ?? .null, "once": params["once"] ?? .null, "expires": 1_795_000_000], [])
        }
        defer { daemon.close() }
        let result = try Self.run(["invite", "--role", "read", "--once", "--expires", "2h", "--data-dir", data], in: root + "/src/deep")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == Self.line + "\n", "the line alone on stdout: \(result.stdout.debugDescription)")
        #expect(result.stderr.contains("as a reader") && result.stderr.contains("It works once") && result.stderr.contains("It expires in 2 hours"),
                "\(result.stderr)")
        #expect(daemon.params(of: "project/invite") == [["key": .string(Self.key), "role": "read", "once": true, "expiresIn": 7200]])
        let plain = try Self.run(["invite", root, "--data-dir", data], in: "/")
        #expect(plain.status == 0 && plain.stdout == Self.line + "\n", "\(plain.stderr)")
        #expect(daemon.params(of: "project/invite").last == ["key": .string(Self.key), "role": "write", "once": false], "write, many times, no expiry by default")
    }

    @Test func membersRoleAndRevokePrintWhatTheDaemonAnswersAndItsRefusals() throws {
        let (root, data, daemon) = try Self.setUp { method, params in
            switch method {
            case "project/members":
                return (["members": [["fingerprint": "3f1c-0a9e", "name": "ann", "role": "owner", "online": true, "you": true],
                                     ["fingerprint": "77aa-0a9e", "name": "bob", "role": "read", "online": true, "you": false]]], [])
            case "project/role" where params["member"] == "bob":
                return (["fingerprint": "77aa-0a9e", "name": "bob", "role": params["role"] ?? .null, "online": true, "you": false], [])
            case "project/revoke" where params["member"] == "bob":
                return (["fingerprint": "77aa-0a9e", "name": "bob", "online": false, "you": false], [])
            case "project/role", "project/revoke":
                return (ScriptedDaemon.refusal("Invalid params: params.member: no member of project greeter is named zed; its members: ann, bob"), [])
            default:
                return (.null, [])
            }
        }
        defer { daemon.close() }
        let members = try Self.run(["members", "--data-dir", data], in: root)
        #expect(members.status == 0, "\(members.stderr)")
        #expect(members.stdout == "\"greeter\": 2 members.\n  ann  owner    online   3f1c-0a9e  (you)\n  bob  read     online   77aa-0a9e\n", "\(members.stdout)")
        let role = try Self.run(["role", "bob", "write", "--data-dir", data], in: root + "/src")
        #expect(role.status == 0 && role.stdout == "bob (77aa-0a9e) is now a writer of \"greeter\": sees and edits the files.\n", "\(role.stdout) \(role.stderr)")
        #expect(daemon.params(of: "project/role") == [["key": .string(Self.key), "member": "bob", "role": "write"]])
        let revoke = try Self.run(["revoke", "bob", "--data-dir", data], in: root)
        #expect(revoke.status == 0 && revoke.stdout.hasPrefix("bob (77aa-0a9e) was removed from \"greeter\".\n"), "\(revoke.stdout) \(revoke.stderr)")
        let unknown = try Self.run(["role", "zed", "read", "--data-dir", data], in: root)
        #expect(unknown.status == 1 && unknown.stdout.isEmpty, "\(unknown.stdout)")
        #expect(unknown.stderr == "quire role: no member of project greeter is named zed; its members: ann, bob\n", "\(unknown.stderr)")
        let elsewhere = try Self.run(["revoke", "bob", "--data-dir", data], in: "/")
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("/ is in no project the quire running shares or follows"), "\(elsewhere.stderr)")
        #expect(daemon.params(of: "project/revoke").count == 1, "nothing is asked for a folder in no project")
    }
}
