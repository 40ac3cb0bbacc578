import Foundation
import JSON
import Logging
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import Testing
import QuireTestSupport

/// A reviewer's attacks on durable editor views, open-never-destroys-text and edit-intent rule 5
/// (protocol/decisions/durable-views.md, edit-intent.md). Each test pins a case found while
/// trying to break them, or one that held.
@Suite struct DurableViewEdgeTests {
    /// Ann and bob come back to the restarted `daemon`, reopen their views (each must be
    /// answered) and take in what it sends them.
    static func bothReopen(_ ann: TestEditor, _ bob: TestEditor, on daemon: Daemon) {
        ann.connect(to: daemon)
        bob.connect(to: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        #expect(ann.reopen()["error"] == nil)
        #expect(bob.reopen()["error"] == nil)
        ann.deliver()
        bob.deliver()
    }

    /// A daemon over the data directory `path`. Replica IDs start at `replicas`, so a restarted
    /// daemon hands out replica IDs no earlier session used (as random IDs do in the daemon).
    /// The daemon before it (a "restart" in this process) may let go of the data directory a
    /// moment after its scope ends on a loaded machine (a fresh clone's CI run once found it
    /// still locked): its lock is waited for, at most 10 s.
    /// `configure`: settings beyond the defaults.
    static func daemon(at path: String, replicas: UInt64, snapshotLogBytes: Int = 1 << 20,
                       configure: (inout Daemon.Configuration) -> Void = { _ in }) throws -> Daemon {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var next = replicas
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                let store = try DocumentStore(path: path, snapshotLogBytes: snapshotLogBytes, logger: logger)
                var configuration = Daemon.Configuration()
                configure(&configuration)
                return Daemon(configuration: configuration, logger: logger, replicaSource: { next += 1; return ReplicaID(next) },
                              store: store)
            } catch where "\(error)".contains("is in use by another quire") && Date() < deadline {
                usleep(20_000)
            }
        }
    }

    // MARK: Tombstones an editor at an in-between revision still shows

    /// Bob types `<X>` and deletes it again; ann applies the first daemon edit (revision 1) but
    /// not the second. At revision 1 she shows `<X>`, and so does her view's `text(atRevision: 1)`,
    /// though neither its confirmed nor its sent copy does. The tombstones of `<X>` must stay
    /// (ann's next edit may be anchored to them): otherwise her typing after `<X>` is refused by
    /// the document and lost, while her editor shows it.
    @Test func typingAfterTextShownOnlyAtAnInBetweenRevisionIsKept() throws {
        let path = DaemonProcess.temporaryDirectory("review-between-live")
        let daemon = try Self.daemon(at: path, replicas: 100)
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "a\n")
        bob.open("doc", text: "")
        bob.edit(1..<1, with: "<X>")
        ann.deliver()                       // ann is at revision 1: "a<X>\n"
        ann.holdIncoming = true
        bob.edit(1..<4, with: "")           // sent to ann, who has not applied it yet
        bob.request("document/close", ["uri": "doc"])   // bob's undo history refers to `<X>` no more
        let document = try #require(daemon.documents["doc"])
        daemon.dropTombstones(of: document) // what a due snapshot does
        ann.edit(4..<4, with: "!")          // typed after `<X>`, based on revision 1
        ann.holdIncoming = false
        ann.deliver()
        #expect(document.text.string == "a!\n", "\(document.text.string.debugDescription)")
        #expect(ann.string == document.text.string, "ann \(ann.string.debugDescription)")
    }

    /// The same across a restart: snapshots (which drop tombstones no view refers to) are written
    /// while ann's view is at an in-between revision; she reopens at revision 1 with `!` typed
    /// after `<X>`.
    @Test func aReopenAtAnInBetweenRevisionAfterSnapshotsKeepsItsTyping() throws {
        let path = DaemonProcess.temporaryDirectory("review-between-reopen")
        let ann: TestEditor
        do {
            let daemon = try Self.daemon(at: path, replicas: 100, snapshotLogBytes: 64)
            ann = TestEditor(daemon: daemon)
            let bob = TestEditor(daemon: daemon)
            ann.initialize(user: "ann")
            bob.initialize(user: "bob")
            ann.open("doc", text: "a\n")
            bob.open("doc", text: "")
            bob.edit(1..<1, with: "<X>")
            ann.deliver()                   // revision 1
            bob.edit(1..<4, with: "")       // revision 2, never applied by ann
            bob.request("document/close", ["uri": "doc"])
            let cat = TestEditor(daemon: daemon)
            cat.initialize(user: "cat")
            cat.open("doc", text: "")
            for n in 0..<30 {               // enough log for several snapshots
                cat.edit(cat.text.count..<cat.text.count, with: "c\(n)\n")
                daemon.commit()
            }
            ann.disconnect()
        }
        #expect(ann.string == "a<X>\n")
        ann.text.insert("!", at: 4)
        let daemon = try Self.daemon(at: path, replicas: 200, snapshotLogBytes: 64)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        let reply = ann.reopen()
        #expect(reply["error"] == nil, "\(reply)")
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text.hasPrefix("a!\n") && !text.contains("X"), "\(text.debugDescription)")
        #expect(ann.string == text, "ann \(ann.string.debugDescription) daemon \(text.debugDescription)")
    }

    // MARK: Rule 5 and a concurrent edit of the neighbouring word

    /// Ann replaces the argument of `f(x)` (Vim `rz`, the line resent whole); bob, at the same
    /// time, extends the callee to `fn`. Rule 5 takes `(` and `)` into ann's replacement, so it
    /// would be inserted after `f`, exactly where bob's `n` is: `f(z)n` for one of the two
    /// orders. The argument's punctuation is not a token of its own here: `fn(z)` either way.
    @Test(arguments: [false, true], [false, true])
    func replacingAnArgumentWhileTheOtherExtendsTheCallee(annFirst: Bool, swapRoles: Bool) {
        let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: "f(x)\n")
        let (ann, bob) = swapRoles ? (second, first) : (first, second)
        ann.holdIncoming = true
        bob.holdIncoming = true
        let replace = { EditIntentTests.type(ann, 2..<3, "z", as: .linesWithCursor) }
        let extend = { EditIntentTests.type(bob, 1..<1, "n", as: .linesWithCursor) }
        if annFirst { replace(); extend() } else { extend(); replace() }
        for _ in 0..<2 { ann.deliver(); bob.deliver() }
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(ann.string == text && bob.string == text)
        // Rule 5 takes punctuation only for a token with no other word, so `(` and `)` stay.
        #expect(text == "fn(z)\n", "\(text.debugDescription)")
    }

    /// Ann replaces the argument of `f(x)` (`rz`) while bob, typing in his own buffer, adds a
    /// second argument before `)` or a first one after `(`. The brackets stay (rule 5 leaves a
    /// token with other words alone), so `, w` stays inside them. A first argument typed right
    /// after `(` while `x` is replaced is two insertions at one anchor: their order is the
    /// CRDT's (newest first), so `f(zw, )` is possible; a known limit of one-character
    /// replacements only (edit-intent.md, rule 6: a longer one hangs from its first removed
    /// character, `ReplacedWordPlacementTests`).
    @Test(arguments: [(3, ", w", "f(z, w)\n"), (2, "w, ", "f(w, z)\n")] as [(Int, String, String)])
    func replacingAnArgumentWhileTheOtherAddsOne(at offset: Int, typed: String, expected: String) {
        for swapRoles in [false, true] {
            let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: "f(x)\n")
            let (ann, bob) = swapRoles ? (second, first) : (first, second)
            ann.holdIncoming = true
            bob.holdIncoming = true
            EditIntentTests.type(ann, 2..<3, "z", as: .linesWithCursor)
            EditIntentTests.type(bob, offset..<offset, typed, as: .linesWithCursor)
            for _ in 0..<2 { ann.deliver(); bob.deliver() }
            let text = daemon.documents["doc"]?.text.string ?? ""
            #expect(ann.string == text && bob.string == text)
            if offset == 3 {
                #expect(text == expected, "\(text.debugDescription)")
            } else {
                withKnownIssue("two insertions after the same `(` are ordered by the CRDT, not by intent", isIntermittent: true) {
                    #expect(text == expected, "\(text.debugDescription)")
                }
            }
        }
    }

    /// The case rule 5 is for still holds: two concurrent replacements of one token `<A1>`
    /// leave both tokens whole.
    @Test(arguments: [false, true])
    func twoReplacementsOfOneTokenStayWhole(swapRoles: Bool) {
        let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: "x <A1> y\n")
        let (ann, bob) = swapRoles ? (second, first) : (first, second)
        ann.holdIncoming = true
        bob.holdIncoming = true
        EditIntentTests.type(ann, 2..<6, "<B1>", as: .linesWithCursor)
        EditIntentTests.type(bob, 2..<6, "<C1>", as: .linesWithCursor)
        for _ in 0..<2 { ann.deliver(); bob.deliver() }
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text == "x <B1><C1> y\n" || text == "x <C1><B1> y\n", "\(text.debugDescription)")
        #expect(ann.string == text && bob.string == text)
    }

    // MARK: What held

    /// Undo, document/merge and a resync, then `kill -9`; both editors type offline and reopen:
    /// every token once, whole, the undone one gone, and both editors show the daemon's text.
    @Test(arguments: [1 << 20, 64])
    func undoMergeAndResyncThenACrash(snapshotLogBytes: Int) throws {
        let path = DaemonProcess.temporaryDirectory("review-undo-merge-resync")
        let ann: TestEditor, bob: TestEditor
        do {
            let daemon = try Self.daemon(at: path, replicas: 100, snapshotLogBytes: snapshotLogBytes)
            ann = TestEditor(daemon: daemon)
            bob = TestEditor(daemon: daemon)
            ann.initialize(user: "ann")
            bob.initialize(user: "bob")
            ann.open("doc", text: "one <A1>\n")
            bob.open("doc", text: "")
            bob.edit(8..<8, with: " <B2>")
            _ = bob.request("document/undo", ["uri": "doc"])
            bob.deliver()
            ann.deliver()
            let other = TestEditor(daemon: daemon)
            other.initialize(user: "cat")
            other.open("other", text: "f(<M3>)\n")
            _ = ann.request("document/merge", ["uri": "doc", "from": "other"])
            ann.deliver()
            bob.edit(0..<0, with: "\"s\" ")
            let resync = ann.request("document/resync", ["uri": "doc"])
            ann.text = Array((resync["result"]?["text"]?.stringValue ?? "").unicodeScalars)
            ann.epoch = Int(resync["result"]?["epoch"]?.integerValue ?? 0)
            ann.editorRevision = 0
            ann.daemonRevision = 0
            ann.edit(ann.text.count..<ann.text.count, with: "<A4>\n")
            bob.edit(0..<0, with: "<B5> ")   // ann never applies this one
            daemon.commit()
            ann.disconnect()
            bob.disconnect()
        }
        ann.text.append(contentsOf: Array("<off-ann>\n".unicodeScalars))
        bob.text.insert(contentsOf: Array("<off-bob> ".unicodeScalars), at: 0)
        let daemon = try Self.daemon(at: path, replicas: 200, snapshotLogBytes: snapshotLogBytes)
        Self.bothReopen(ann, bob, on: daemon)
        let text = daemon.documents["doc"]?.text.string ?? ""
        for token in ["<A1>", "<A4>", "<B5>", "\"s\"", "f(<M3>)", "<off-ann>", "<off-bob>"] {
            #expect(text.components(separatedBy: token).count == 2, "\(token) in \(text.debugDescription)")
        }
        #expect(!text.contains("<B2>"), "\(text.debugDescription)")
        #expect(ann.string == text && bob.string == text, "ann \(ann.string.debugDescription) bob \(bob.string.debugDescription) daemon \(text.debugDescription)")
    }

    /// Views over many snapshots, the newest snapshot damaged: recovery falls back to the older
    /// one and its views, and a reopen still resolves by identity.
    @Test func aDamagedNewestSnapshotFallsBackToViewsThatMatchIt() throws {
        let path = DaemonProcess.temporaryDirectory("review-damaged-snapshot")
        let ann: TestEditor, bob: TestEditor
        do {
            let daemon = try Self.daemon(at: path, replicas: 100, snapshotLogBytes: 64)
            ann = TestEditor(daemon: daemon)
            bob = TestEditor(daemon: daemon)
            ann.initialize(user: "ann")
            bob.initialize(user: "bob")
            ann.open("doc", text: "start\n")
            bob.open("doc", text: "")
            for n in 0..<40 {
                bob.edit(bob.text.count..<bob.text.count, with: "<b\(n)> ")
                daemon.commit()
                if n % 3 == 0 { ann.deliver() }
                if n % 5 == 0 { bob.edit(bob.text.count - 6..<bob.text.count, with: "") }   // removals: tombstones
                ann.edit(0..<0, with: "a\(n) ")
                daemon.commit()
                if n % 4 == 0 { bob.deliver() }
            }
            ann.disconnect()
            bob.disconnect()
        }
        let directory = try #require(try FileSystem.list(path + "/documents").first.map { path + "/documents/" + $0 })
        let newest = try #require(DocumentFiles.numbers(in: try FileSystem.list(directory), prefix: "snapshot").last)
        var bytes = try #require(try FileSystem.read(directory + "/snapshot-\(newest)"))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/snapshot-\(newest)"))
        ann.text.insert(contentsOf: Array("OFF ".unicodeScalars), at: 0)
        bob.text.append(contentsOf: Array("<bob-off>".unicodeScalars))
        let daemon = try Self.daemon(at: path, replicas: 200, snapshotLogBytes: 64)
        Self.bothReopen(ann, bob, on: daemon)
        let text = daemon.documents["doc"]?.text.string ?? ""
        for n in 0..<40 {
            #expect(text.components(separatedBy: "a\(n) ").count == 2, "a\(n) in \(text.debugDescription)")
        }
        #expect(text.hasPrefix("OFF a39 ") && text.components(separatedBy: "<bob-off>").count == 2, "\(text.debugDescription)")
        #expect(ann.string == text && bob.string == text)
    }

    // MARK: Peers

    /// Bob opens `notes` empty before his daemon links with ann's; his empty copy becomes ann's
    /// document (JoinByNameTests). His view must be as durable there as anywhere: after his
    /// daemon is killed, his reopen resumes the view and keeps what he typed meanwhile.
    @Test func aViewOfAnEmptyCopyThatJoinedAPeersDocumentSurvivesACrash() throws {
        let path = DaemonProcess.temporaryDirectory("review-joined-view")
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let bob: TestEditor
        let viewBefore: String?
        do {
            let net = PeerTestNetwork()
            let a = net.makeDaemon(100)
            let b = net.makeDaemon(200, store: try DocumentStore(path: path, logger: logger))
            let ann = TestEditor(daemon: a)
            ann.initialize(user: "ann")
            ann.open("notes", text: "ann's plan\n")
            bob = TestEditor(daemon: b)
            bob.initialize(user: "bob")
            bob.open("notes", text: "")
            try net.link(a, b)
            net.pump([a, b])
            bob.deliver()
            #expect(bob.string == "ann's plan\n")
            bob.edit(bob.text.count..<bob.text.count, with: "<bob1>\n")
            net.pump([a, b])
            b.commit()
            viewBefore = bob.view
            bob.disconnect()
        }
        bob.text.append(contentsOf: Array("<bob-off>\n".unicodeScalars))
        let net = PeerTestNetwork()
        let b = net.makeDaemon(300, store: try DocumentStore(path: path, logger: logger))
        bob.connect(to: b)
        bob.initialize(user: "bob")
        let reply = bob.reopen()
        // `Daemon.documentForPeer` swaps the pristine document for the joined one and logs
        // `opened` there for the views sessions already show, so recovery rebuilds them.
        #expect(reply["error"] == nil, "\(reply)")
        #expect(reply["result"]?["view"]?.stringValue == viewBefore, "the view was resumed, not replaced: \(reply)")
        let text = b.documents["notes"]?.text.string ?? ""
        #expect(text == "ann's plan\n<bob1>\n<bob-off>\n", "\(text.debugDescription)")
    }

    // MARK: A reopen's (or resync's) reply lost

    /// Ann reopens after a crash; the daemon resolves her offline typing and starts a new epoch
    /// of her view, and dies again before she reads the reply. Meanwhile bob had typed `<B9>`,
    /// which the lost reply would have brought her. Her second reopen names the old epoch:
    /// merged as text against the view's new-epoch text, her buffer (without `<B9>`) reads as
    /// her removing `<B9>`. Nothing she did removed it; it must stay, and her typing count once.
    @Test(arguments: [false, true])
    func aReopenWhoseReplyWasLostRemovesNothingOthersTyped(withBase: Bool) throws {
        let path = DaemonProcess.temporaryDirectory("review-reopen-reply-lost")
        let ann: TestEditor, bob: TestEditor
        do {
            let daemon = try Self.daemon(at: path, replicas: 100)
            ann = TestEditor(daemon: daemon)
            bob = TestEditor(daemon: daemon)
            ann.initialize(user: "ann")
            bob.initialize(user: "bob")
            ann.open("doc", text: "x <A1> y\n")
            bob.open("doc", text: "")
            daemon.commit()
            ann.disconnect()
            bob.disconnect()
        }
        ann.text.append(contentsOf: Array("<off>\n".unicodeScalars))
        let base = "x <A1> y\n"
        do {
            let daemon = try Self.daemon(at: path, replicas: 200)
            bob.connect(to: daemon)
            bob.initialize(user: "bob")
            bob.reopen()
            bob.edit(0..<0, with: "<B9> ")
            ann.connect(to: daemon)
            ann.initialize(user: "ann")
            let (text, epoch, revision, view) = (ann.text, ann.epoch, ann.daemonRevision, ann.view)
            #expect(Self.reopen(ann, base: withBase ? base : nil)["error"] == nil)
            daemon.commit()
            // The daemon dies before ann reads the reply: she is where she was.
            (ann.text, ann.epoch, ann.daemonRevision, ann.view) = (text, epoch, revision, view)
            ann.disconnect()
            bob.disconnect()
        }
        let daemon = try Self.daemon(at: path, replicas: 300)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        let reply = Self.reopen(ann, base: withBase ? base : nil)
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text.contains("<B9>"), "bob's typing survives: \(text.debugDescription) (\(reply))")
        #expect(text.components(separatedBy: "<off>").count == 2, "\(text.debugDescription)")
        if reply["error"] == nil { #expect(ann.string == text) }
    }

    /// `TestEditor.reopen()` with the client's fallback `base` when given.
    static func reopen(_ editor: TestEditor, base: String?) -> JSONValue {
        guard let base else { return editor.reopen() }
        var params: [String: JSONValue] = ["uri": .string(editor.uri), "text": .string(editor.string), "base": .string(base),
                                           "epoch": .integer(Int64(editor.epoch)), "revision": .integer(Int64(editor.daemonRevision))]
        if let view = editor.view { params["view"] = .string(view) }
        let reply = editor.request("document/open", .object(params))
        for change in reply["result"]?["changes"]?.arrayValue ?? [] { editor.apply(change) }
        if let result = reply["result"], result != .null {
            editor.epoch = Int(result["epoch"]?.integerValue ?? 0)
            editor.view = result["view"]?.stringValue
            editor.editorRevision = 0
            editor.daemonRevision = 0
        }
        return reply
    }

    /// Bob, on a peer daemon, types while ann's daemon takes his operations in and is killed
    /// part-way; ann had applied only some of the daemon edits and typed offline. After the
    /// restart and a new link, every token is there once and all copies converge.
    @Test func aCrashWhilePeerOperationsArrive() throws {
        let path = DaemonProcess.temporaryDirectory("review-peer-crash")
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let ann: TestEditor, bob: TestEditor
        let b: Daemon
        do {
            let net = PeerTestNetwork()
            let a = net.makeDaemon(100, store: try DocumentStore(path: path, snapshotLogBytes: 256, logger: logger))
            b = net.makeDaemon(200)
            ann = TestEditor(daemon: a)
            ann.initialize(user: "ann")
            ann.open("notes", text: "x <A1> y\n")
            let wire = try net.link(a, b)
            net.pump([a, b])
            bob = TestEditor(daemon: b)
            bob.initialize(user: "bob")
            bob.open("notes", text: "x <A1> y\n")
            for n in 0..<12 {
                bob.edit(bob.text.count..<bob.text.count, with: "<b\(n)>\n")
                if n % 4 == 3 { bob.edit(0..<2, with: "") ; bob.edit(0..<0, with: "x ") }
                net.pump([a, b], limit: 2)   // part of what is in flight
                if n % 3 == 0 { ann.deliver() }
                if n == 5 { ann.edit(0..<0, with: "<a5> ") }
            }
            a.commit()
            net.sever(wire)
            ann.disconnect()
        }
        ann.text.append(contentsOf: Array("<ann-off>\n".unicodeScalars))
        let net = PeerTestNetwork()
        let a = net.makeDaemon(300, store: try DocumentStore(path: path, snapshotLogBytes: 256, logger: logger))
        ann.connect(to: a)
        ann.initialize(user: "ann")
        #expect(ann.reopen()["error"] == nil)
        try net.link(a, b)
        net.pump([a, b])
        ann.deliver()
        bob.deliverInbox()
        net.pump([a, b])
        ann.deliver()
        bob.deliverInbox()
        let text = a.documents["notes"]?.text.string ?? ""
        #expect(b.documents["notes"]?.text.string == text)
        for token in (0..<12).map({ "<b\($0)>" }) + ["<a5>", "<ann-off>", "<A1>"] {
            #expect(text.components(separatedBy: token).count == 2, "\(token) in \(text.debugDescription)")
        }
        #expect(ann.string == text && bob.string == text, "ann \(ann.string.debugDescription) bob \(bob.string.debugDescription) daemon \(text.debugDescription)")
    }

    /// Eighteen editors leave without closing: the newest eight views are kept whole, the eight
    /// before them as their texts (detached; the daemon here keeps at most eight detached views
    /// per document, where the default is thousands within a bound of bytes), and the two
    /// oldest are gone, all logged, so a
    /// restart keeps exactly that. A kept one resumes by identity; a detached one's reopen merges
    /// as text with nothing asked; a gone one's is refused (-32017, nothing destroyed) until it
    /// says what it has in common (`base`).
    @Test func viewsPushedOutAreKeptAsTextsThenGoAcrossARestart() throws {
        let path = DaemonProcess.temporaryDirectory("review-eviction")
        let count = 2 * DormantViews.maximumPerDocument + 2
        var editors: [TestEditor] = []
        let eightDetached: (inout Daemon.Configuration) -> Void = { $0.maximumDetachedViewsPerDocument = DormantViews.maximumPerDocument }
        do {
            let daemon = try Self.daemon(at: path, replicas: 100, configure: eightDetached)
            for n in 0..<count {
                let editor = TestEditor(daemon: daemon)
                editor.initialize(user: "e\(n)")
                editor.open("doc", text: n == 0 ? "start\n" : "")
                editor.deliver()
                editor.edit(editor.text.count..<editor.text.count, with: "<e\(n)>\n")
                editors.append(editor)
            }
            for editor in editors { editor.connection.endOfInput() }
            let document = try #require(daemon.documents["doc"])
            #expect(daemon.dormantViews.views(of: document.id).count == DormantViews.maximumPerDocument)
            #expect(daemon.dormantViews.detachedViews(of: document.id).count == DormantViews.maximumPerDocument)
            for editor in editors { editor.disconnect() }
        }
        let daemon = try Self.daemon(at: path, replicas: 300, configure: eightDetached)
        let document = try #require(daemon.documents["doc"])
        #expect(Set(daemon.dormantViews.views(of: document.id).map(\.id)) == Set(editors[10...].compactMap(\.view)))
        #expect(Set(daemon.dormantViews.detachedViews(of: document.id).map(\.id)) == Set(editors[2..<10].compactMap(\.view)))
        let gone = editors[0], detached = editors[2], kept = editors[count - 1]
        for (n, editor) in [(0, gone), (2, detached), (count - 1, kept)] {
            editor.text.append(contentsOf: Array("<off\(n)>\n".unicodeScalars))
            editor.connect(to: daemon)
            editor.initialize(user: "e\(n)")
        }
        #expect(gone.reopen()["error"]?["code"] == -32017)
        #expect(Self.reopen(gone, base: gone.string.replacingOccurrences(of: "<off0>\n", with: ""))["error"] == nil)
        #expect(detached.reopen()["error"] == nil, "a detached view merges as text")
        let view = kept.view
        let reply = kept.reopen()
        #expect(reply["result"]?["view"]?.stringValue == view, "\(reply)")
        gone.deliver()
        detached.deliver()
        let text = document.text.string
        for token in (0..<count).map({ "<e\($0)>" }) + ["<off0>", "<off2>", "<off\(count - 1)>"] {
            #expect(text.components(separatedBy: token).count == 2, "\(token) in \(text.debugDescription)")
        }
        #expect(gone.string == text && detached.string == text && kept.string == text)
    }
}
