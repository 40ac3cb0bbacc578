import Foundation
import JSON
import Logging
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import Testing

/// A reviewer's attacks on durable editor views, open-never-destroys-text and edit-intent rule 5
/// (protocol/decisions/durable-views.md, edit-intent.md). Each test pins a case found while
/// trying to break them, or one that held.
@Suite struct ReviewDurableViewTests {
    /// A daemon over the data directory `path`. Replica IDs start at `replicas`, so a restarted
    /// daemon hands out replica IDs no earlier session used (as random IDs do in the daemon).
    static func daemon(at path: String, replicas: UInt64, snapshotLogBytes: Int = 1 << 20) throws -> Daemon {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var next = replicas
        return Daemon(configuration: Daemon.Configuration(), logger: logger, replicaSource: { next += 1; return ReplicaID(next) },
                      store: try DocumentStore(path: path, snapshotLogBytes: snapshotLogBytes, logger: logger))
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
        #expect(text == "fn(z)\n", "\(text.debugDescription)")
        #expect(ann.string == text && bob.string == text)
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
}
