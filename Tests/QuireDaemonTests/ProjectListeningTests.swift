import JSON
@testable import QuireDaemon
import QuireProtocol
import QuireTestSupport
import Testing

/// Where a shared project listens across stops and restarts (`ProjectService+Listening`): a port
/// picked once (`listen` port 0) is taken again while free, with a notice; a taken one is
/// replaced by a free one, with a notice, never a failed share; sharing again while listening
/// binds nothing new.
@Suite struct ProjectListeningTests {
    static func share(_ daemon: Daemon, _ editor: TestEditor, root: String) -> JSONValue {
        editor.request("project/share", ["root": .string(root), "listen": ["127.0.0.1:0"]])
    }

    @Test func aPortPickedOnceIsTakenAgainOrReplacedSayingSo() throws {
        let (daemon, transport) = ProjectFixture.daemon(49_000)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let root = try ProjectFixture.folder(["a.md": Array("a\n".utf8)], name: "listening")
        let first = try #require(Self.share(daemon, editor, root: root)["result"])
        let key = try #require(first["key"]?.stringValue)
        let port = try #require(transport.listened.last?.port)
        #expect(first["addresses"] == .array([.string("127.0.0.1:\(port)")]))
        #expect(first["notices"] == nil, "nothing to say the first time")

        // Shared again while listening: nothing new is bound, nothing to say.
        let listens = transport.listened.count
        let again = try #require(Self.share(daemon, editor, root: root)["result"])
        #expect(transport.listened.count == listens && again["line"] == first["line"] && again["notices"] == nil)

        // Stopped and shared again: the same port, said so, the same line.
        #expect(editor.request("project/stop", ["key": .string(key)])["result"] != nil)
        let restarted = try #require(Self.share(daemon, editor, root: root)["result"])
        #expect(transport.listened.last?.port == port)
        #expect(restarted["line"] == first["line"])
        #expect(restarted["notices"]?.arrayValue?.first?.stringValue?.hasPrefix("Listening on 127.0.0.1:\(port) again, the port this project used before") == true,
                "\(restarted)")

        // The port is taken meanwhile: a free one, said so, and a line that names it.
        #expect(editor.request("project/stop", ["key": .string(key)])["result"] != nil)
        transport.taken = [port]
        let moved = try #require(Self.share(daemon, editor, root: root)["result"])
        let newPort = try #require(transport.listened.last?.port)
        #expect(newPort != port)
        #expect(moved["addresses"] == .array([.string("127.0.0.1:\(newPort)")]))
        #expect(moved["line"] != first["line"])
        let notice = moved["notices"]?.arrayValue?.first?.stringValue ?? ""
        #expect(notice.contains("127.0.0.1:\(port), is taken (Address already in use): listening on 127.0.0.1:\(newPort) instead"), "\(notice)")
    }

    /// At a daemon's start the project listens again by itself (`relisten`): the same ports and
    /// the very addresses the line holds; a port found taken is replaced, not an error that
    /// would leave the project unreachable.
    @Test func listeningAgainAtStartReplacesATakenPortInsteadOfFailing() throws {
        let (daemon, transport) = ProjectFixture.daemon(49_100)
        let root = try ProjectFixture.folder(["a.md": Array("a\n".utf8)], name: "relisten")
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let port = try #require(project.listeningPorts.first)
        let addresses = project.addresses
        project.listeningPorts = []
        #expect(try daemon.projects.relisten(project, transport: transport).first?.contains("again") == true)
        #expect(project.listeningPorts == [port] && project.addresses == addresses)

        project.listeningPorts = []
        transport.taken = [port]
        let notices = try daemon.projects.relisten(project, transport: transport)
        #expect(notices.first?.contains("is taken") == true, "\(notices)")
        #expect(project.listeningPorts.count == 1 && project.listeningPorts != [port])
        #expect(project.addresses.allSatisfy { !$0.hasSuffix(":\(port)") })
    }

    /// A project record whose kept listening addresses are damaged (a port out of range, not an
    /// address, port 0): those are skipped, saying so in the log, and the good ones are listened
    /// on again; with none left the project listens as a new share would. Before, one damaged
    /// entry made every later `quire share` of the folder fail and left it unreachable at start.
    @Test func aDamagedPortRecordIsSkippedNotAFailedShare() throws {
        let log = LogCapture()
        let daemon = PeerTestNetwork().makeDaemon(49_200, log: log)
        let transport = RecordingTransport()
        daemon.transport = transport
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let root = try ProjectFixture.folder(["a.md": Array("a\n".utf8)], name: "damaged-listen")
        let first = try #require(Self.share(daemon, editor, root: root)["result"])
        let key = try #require(first["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let port = try #require(project.listeningPorts.first)

        #expect(editor.request("project/stop", ["key": .string(key)])["result"] != nil)
        project.listen = ["127.0.0.1:99999", "not an address\u{1B}[2J", "127.0.0.1:0", "127.0.0.1:\(port)"]
        let again = editor.request("project/share", ["root": .string(root)])
        let result = try #require(again["result"], "\(again)")
        #expect(transport.listened.last?.port == port && result["line"] == first["line"])
        #expect(log.all.contains { $0.contains("3 listening addresses kept for this project are not valid and are skipped") }, "\(log.all)")
        #expect(!log.all.joined().contains("\u{1B}"), "the damaged text is not logged raw")

        project.listeningPorts = []
        project.listen = ["127.0.0.1:70000"]
        let notices = try daemon.projects.relisten(project, transport: transport)
        #expect(notices.isEmpty && project.listeningPorts.count == 1 && !project.addresses.isEmpty, "\(notices)")
    }

    /// What the daemon found listening again by itself (at a start) reaches the editors, since no
    /// `project/share` reply carries it: a kept port taken (partners need a new line) is shown as
    /// a warning to the editors connected then, once (with none connected it waits for the next
    /// that starts: the editor clients' `test_notices` tests); the same port again is not shown.
    @Test func aKeptPortFoundTakenWhenListeningAgainIsShownOnce() throws {
        for taken in [false, true] {
            let (daemon, transport) = ProjectFixture.daemon(taken ? 49_400 : 49_300)
            let owner = TestEditor(daemon: daemon)
            owner.initialize()
            let root = try ProjectFixture.folder(["a.md": Array("a\n".utf8)], name: "start-notice")
            let key = try #require(Self.share(daemon, owner, root: root)["result"]?["key"]?.stringValue)
            let project = try #require(daemon.projects.project(key: key))
            let port = try #require(project.listeningPorts.first)
            project.listeningPorts = []   // as after a restart
            if taken { transport.taken = [port] }
            daemon.projects.start { _, _ in }
            let told = owner.take("window/showMessage")
            if taken {
                #expect(told.count == 1, "\(told)")
                #expect(told.first?["params"]?["type"] == .integer(2))
                #expect(told.first?["params"]?["message"]?.stringValue?.contains("127.0.0.1:\(port), is taken") == true, "\(told)")
            } else {
                #expect(told.isEmpty, "listening where it did before is nothing to show: \(told)")
            }
            let next = TestEditor(daemon: daemon)
            next.initialize()
            #expect(next.take("window/showMessage").isEmpty, "shown once")
        }
    }

    /// With no editor connected when the daemon listens again (its start, before any editor),
    /// the notice waits for the next editor that starts, and is shown to it once.
    @Test func aKeptPortFoundTakenWithNoEditorWaitsForTheNextOne() throws {
        let (daemon, transport) = ProjectFixture.daemon(49_500)
        let owner = TestEditor(daemon: daemon)
        owner.initialize()
        let root = try ProjectFixture.folder(["a.md": Array("a\n".utf8)], name: "start-notice-queued")
        let key = try #require(Self.share(daemon, owner, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let port = try #require(project.listeningPorts.first)
        _ = owner.request("shutdown")
        for session in daemon.sessionRegistry.inOrder { daemon.endSession(try #require(session as? EditorSession)) }
        try #require(daemon.sessionRegistry.inOrder.isEmpty, "the editor has gone")
        project.listeningPorts = []
        transport.taken = [port]
        daemon.projects.start { _, _ in }
        let next = TestEditor(daemon: daemon)
        next.initialize()
        let told = next.take("window/showMessage").compactMap { $0["params"]?["message"]?.stringValue }
        #expect(told.count == 1 && told.first?.contains("127.0.0.1:\(port), is taken") == true, "\(told)")
        let later = TestEditor(daemon: daemon)
        later.initialize()
        #expect(later.take("window/showMessage").isEmpty, "shown once")
    }
}
