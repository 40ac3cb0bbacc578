import EditingTraces
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes

/// What a keystroke costs must not grow with the documents open: the end of a read sends daemon
/// edits for the views that were given operations (`UnsentViews`), and a project's disk pass
/// looks at the files that changed (`SharedProject.passFiles`). Counted, never timed.
@Suite struct TypingScaleTests {
    static func makeDaemon() -> Daemon {
        var next: UInt64 = 700
        return Daemon(replicaSource: { next += 1; return ReplicaID(next) })
    }

    static func name(_ index: Int) -> String { "doc" + String(index + 1000) }

    /// A frame of `document/edit` (a notification) inserting `text` at line 0, `character`.
    static func editFrame(_ uri: String, at character: Int, _ text: String) -> [UInt8] {
        let params: JSONValue = ["uri": .string(uri), "epoch": 0, "revision": 0, "changes": [[
            "range": ["start": ["line": 0, "character": .integer(Int64(character))], "end": ["line": 0, "character": .integer(Int64(character))]],
            "text": .string(text),
        ]]]
        let body = JSONSerializer().string(Message.notification(method: "document/edit", params: params).json)
        return Array("Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    @Test func pendingEditsOfManyViewsAllGoOutInTheOrderOfTheirNames() throws {
        let daemon = Self.makeDaemon()
        let watcher = TestEditor(daemon: daemon), typist = TestEditor(daemon: daemon)
        watcher.initialize(user: "ann")
        typist.initialize(user: "bob")
        let count = 300
        for index in 0..<count {
            for editor in [watcher, typist] {
                #expect(editor.request("document/open", ["uri": .string(Self.name(index)), "text": "x\n"])["result"] != nil)
            }
        }
        _ = watcher.take("document/edit")
        // One read of the typist's: edits of 120 documents in a shuffled order, two of them
        // edited twice (the second edit of each after the first).
        var random = SeededRandom(seed: 23)
        var edited = Array(0..<count).shuffled(using: &random).prefix(120).map { Self.name($0) }
        var frames = Array(edited.map { Self.editFrame($0, at: 0, "a") }.joined())
        frames += Self.editFrame(edited[3], at: 1, "b") + Self.editFrame(edited[7], at: 1, "c")
        typist.sendRaw(frames)
        let sent = watcher.take("document/edit")
        let uris = sent.compactMap { $0["params"]?["uri"]?.stringValue }
        edited.sort()
        #expect(uris == edited, "one daemon edit per document edited, in the order of their names")
        for message in sent {
            let uri = try #require(message["params"]?["uri"]?.stringValue)
            let document = try #require(daemon.documents[uri])
            let texts = (message["params"]?["changes"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }
            #expect(texts.joined() == String(document.text.string.prefix(texts.count)), "\(uri): the changes in the order they were made: \(texts)")
        }
        #expect(daemon.documents[edited.first!]?.text.string.hasPrefix("a") == true)
        let twice = sent.filter { ($0["params"]?["changes"]?.arrayValue?.count ?? 0) == 2 }
        #expect(twice.count == 2, "the two documents edited twice send both edits in one daemon edit")
        #expect(daemon.sessionRegistry.sessions.values.allSatisfy { ($0 as? EditorSession)?.unsentViews.isEmpty == true }, "nothing left to send")
    }

    @Test func aReadLooksOnlyAtTheViewsItGaveOperations() throws {
        let daemon = Self.makeDaemon()
        var watcherSent: [Message] = []
        let watcher = daemon.makeSession { watcherSent.append($0) }
        let typist = daemon.makeSession { _ in }
        for session in [watcher, typist] {
            _ = session.handleRequest(id: .number(1), method: "initialize", params: [:])
            session.handleNotification(method: "initialized", params: [:])
        }
        let count = 2_000
        for index in 0..<count {
            for session in [watcher, typist] {
                let reply = session.handleRequest(id: .number(Int64(index + 2)), method: "document/open",
                                                  params: ["uri": .string(Self.name(index)), "text": "x\n"])
                if case .failure(let error) = reply { Issue.record("open failed: \(error.message)") }
            }
        }
        daemon.endRead()
        watcherSent = []
        #expect(watcher.unsentViews.isEmpty)
        // The typist edits one document: of the watcher's 2,000 views, one is to be sent.
        let edit: JSONValue = ["uri": .string(Self.name(1234)), "epoch": 0, "revision": 0, "changes": [[
            "range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "y"]]]
        typist.handleNotification(method: "document/edit", params: edit)
        #expect(watcher.unsentViews.count == 1, "only the view of the document edited is looked at by the end of the read")
        #expect(typist.unsentViews.isEmpty, "an editor is not sent its own edit")
        daemon.endRead()
        #expect(watcher.unsentViews.isEmpty)
        let edits = watcherSent.map(\.json).filter { $0["method"] == "document/edit" }
        #expect(edits.count == 1 && edits.first?["params"]?["uri"]?.stringValue == Self.name(1234), "\(edits)")
        // A closed view is no longer named, even when its document changes.
        _ = watcher.handleRequest(id: .number(99_999), method: "document/close", params: ["uri": .string(Self.name(5))])
        typist.handleNotification(method: "document/edit", params: ["uri": .string(Self.name(5)), "epoch": 0, "revision": 0, "changes": [[
            "range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "z"]]])
        #expect(watcher.unsentViews.isEmpty)
        daemon.endRead()
    }

    /// A shared project of 2,000 files, every one open in an editor: once the first pass has
    /// looked at them all, an idle pass looks at none, and an edit makes the next pass look at
    /// its one file; a file edited while open is written once its editor closes it.
    @Test func aProjectsDiskPassLooksAtWhatChangedOnly() throws {
        var files: [String: [UInt8]] = [:]
        for index in 0..<2_000 { files["src/m\(index / 100)/f\(index).txt"] = Array("file \(index)\n".utf8) }
        let root = try ProjectFixture.folder(files, name: "scale")
        let (daemon, _) = ProjectFixture.daemon(730)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        var uris: [String: String] = [:]
        for path in files.keys.sorted() {
            let opened = editor.request("document/open", ["file": .string(root + "/" + path), "text": .string(String(decoding: files[path]!, as: UTF8.self))])
            uris[path] = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        }
        daemon.projects.syncDisk()
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 0, "nothing changed: the pass looks at no file")
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 0)
        // An edit of an open file: looked at, not written (its editor's buffer).
        editor.uri = try #require(uris["src/m3/f307.txt"])
        editor.text = Array("file 307\n".unicodeScalars)
        editor.edit(0..<0, with: "edited ")
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 1)
        #expect(ProjectFixture.read(root + "/src/m3/f307.txt") == "file 307\n")
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 0)
        // Its editor closes it: the next pass looks at it and writes it.
        #expect(editor.request("document/close", ["uri": .string(editor.uri)])["error"] == nil)
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 1)
        #expect(ProjectFixture.read(root + "/src/m3/f307.txt") == "edited file 307\n")
        // A change from outside every editor (a file's, an undo's) of a closed file: written too.
        let document = try #require(daemon.documents[editor.uri])
        var scratch = document.text
        scratch.replica = ReplicaID(7_777)
        try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array("again ".unicodeScalars)), to: document)
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 1)
        #expect(ProjectFixture.read(root + "/src/m3/f307.txt") == "again edited file 307\n")
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 0)
        // A scan looks at every file once more (held files may be written now), then none.
        daemon.projects.scanDisk(project)
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == files.count)
        daemon.projects.syncDisk()
        #expect(project.lastPassLooked == 0)
    }
}
