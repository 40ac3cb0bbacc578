import Foundation
import JSON
import Logging
@testable import QuireDaemon
import ReplicatingTypes
import Testing
import QuireTestSupport

/// The daemon remembers, durably, what each editor saw (protocol/decisions/durable-views.md):
/// an editor that reopens after the daemon died is resolved against exactly the elements its
/// view showed, so what others did meanwhile merges by identity and nothing typed is lost,
/// doubled or rebuilt from its neighbours.
@Suite struct DurableViewTests {
    static func daemon(at path: String, snapshotLogBytes: Int = 1 << 20) throws -> Daemon {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var next: UInt64 = 700
        return Daemon(configuration: Daemon.Configuration(), logger: logger, replicaSource: { next += 1; return ReplicaID(next) },
                      store: try DocumentStore(path: path, snapshotLogBytes: snapshotLogBytes, logger: logger))
    }

    /// Ann opens "doc" with `text` on `daemon` and bob joins it.
    static func annAndBob(on daemon: Daemon, text: String) -> (TestEditor, TestEditor) {
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: text)
        bob.open("doc", text: "")
        return (ann, bob)
    }

    /// `text`'s tokens (runs of non-space characters).
    static func tokens(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }

    /// Two editors share `x <A1> y`; the daemon dies. After the restart, bob (reopened) replaces
    /// `<A1>` by `<C1>` or deletes it; ann, who replaced it by `<B1>` while the daemon was away,
    /// reopens: her `<B1>` and bob's `<C1>` are both there, whole, once.
    @Test(arguments: ["<C1>", ""], [1 << 20, 64])
    func anOfflineReplacementRacingAnotherKeepsBothTokensWhole(bobTypes: String, snapshotLogBytes: Int) throws {
        let path = DaemonProcess.temporaryDirectory("durable-view")
        let ann: TestEditor, bob: TestEditor
        do {
            let daemon = try Self.daemon(at: path, snapshotLogBytes: snapshotLogBytes)
            (ann, bob) = Self.annAndBob(on: daemon, text: "x <A1> y\n")
            // Some history, so views hold pending and confirmed revisions.
            ann.edit(9..<9, with: "f(x)\n")
            bob.deliver()
            bob.edit(14..<14, with: "\"s\"\n")
            ann.deliver()
            daemon.commit()
            ann.disconnect()
            bob.disconnect()
        }
        #expect(ann.string == "x <A1> y\nf(x)\n\"s\"\n" && bob.string == ann.string)
        // Ann replaces her token while the daemon is away.
        ann.text.replaceSubrange(2..<6, with: Array("<B1>".unicodeScalars))
        let daemon = try Self.daemon(at: path, snapshotLogBytes: snapshotLogBytes)
        ann.connect(to: daemon)
        bob.connect(to: daemon)
        bob.initialize(user: "bob")
        bob.reopen()
        bob.edit(2..<6, with: bobTypes)
        ann.initialize(user: "ann")
        let reply = ann.reopen()
        #expect(reply["error"] == nil, "\(reply)")
        bob.deliver()
        let text = daemon.documents["doc"]?.text.string ?? ""
        // Each token whole: `<B1>` (and `<C1>`) stand as they were typed, never `<C1B1>`.
        #expect(text.components(separatedBy: "<B1>").count == 2 && !text.contains("A1"), "\(text.debugDescription)")
        if !bobTypes.isEmpty { #expect(text.contains("<C1>"), "\(text.debugDescription)") }
        #expect(text.contains("f(x)\n\"s\"\n"), "\(text.debugDescription)")
        #expect(ann.string == text && bob.string == text, "ann \(ann.string.debugDescription) bob \(bob.string.debugDescription)")
    }

    /// What ann had been sent but not yet confirmed when the daemon died is not her typing: her
    /// reopen at the revision she applied adds only what she typed, never a second copy.
    @Test func aReopenAtAnUnconfirmedRevisionDoublesNothing() throws {
        let path = DaemonProcess.temporaryDirectory("durable-view-revision")
        let ann: TestEditor
        do {
            let daemon = try Self.daemon(at: path)
            let bob: TestEditor
            (ann, bob) = Self.annAndBob(on: daemon, text: "a1 b2\n")
            bob.edit(6..<6, with: "<bob1>\n")
            ann.deliver()   // ann applies bob's line (daemon revision 1), never confirms it
            bob.edit(0..<0, with: "<bob0> ")
            daemon.flush()  // sent to ann, who never reads it: she stays at revision 1
            daemon.commit()
            ann.disconnect()
        }
        #expect(ann.string == "a1 b2\n<bob1>\n")
        ann.text.append(contentsOf: Array("<ann2>\n".unicodeScalars))
        let daemon = try Self.daemon(at: path)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        ann.reopen()
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text == "<bob0> a1 b2\n<bob1>\n<ann2>\n", "\(text.debugDescription)")
        #expect(ann.string == text)
    }

    /// A large substitution that was applied (its reply lost in the crash) and is then sent
    /// again inside the reopened text counts once, while the other person's typing stays.
    @Test func aSubstitutionWhoseReplyWasLostCountsOnce() throws {
        let path = DaemonProcess.temporaryDirectory("durable-view-substitution")
        let lines = (0..<400).map { "row \($0) filler <A\($0)>" }
        let ann: TestEditor
        do {
            let daemon = try Self.daemon(at: path, snapshotLogBytes: 4096)
            let bob: TestEditor
            (ann, bob) = Self.annAndBob(on: daemon, text: lines.joined(separator: "\n") + "\n")
            let substituted = lines.map { $0.replacingOccurrences(of: "filler", with: "FILLER") }.joined(separator: "\n") + "\n"
            ann.text = Array(substituted.unicodeScalars)
            _ = ann.sendEdit(["lines": ["start": 0, "end": 400], "newLines": .array(lines.map { .string($0.replacingOccurrences(of: "filler", with: "FILLER")) })])
            bob.deliver()
            bob.edit(0..<0, with: "f(bob) ")
            daemon.commit()
            ann.disconnect()
        }
        // Ann never read the reply nor bob's edit; she reopens with her substituted text.
        let daemon = try Self.daemon(at: path, snapshotLogBytes: 4096)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        ann.reopen()
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text.components(separatedBy: "\n").count == 401, "\(text.prefix(200))")
        #expect(!text.contains("filler") && text.components(separatedBy: "FILLER").count == 401)
        #expect(text.hasPrefix("f(bob) row 0 FILLER <A0>\n"))
        #expect(ann.string == text)
    }

    /// A view survives snapshots and segment removal: views are written into every snapshot.
    @Test func viewsSurviveSnapshots() throws {
        let path = DaemonProcess.temporaryDirectory("durable-view-snapshots")
        let ann: TestEditor
        do {
            let daemon = try Self.daemon(at: path, snapshotLogBytes: 64)
            let bob: TestEditor
            (ann, bob) = Self.annAndBob(on: daemon, text: "start\n")
            for n in 0..<40 {
                bob.edit(bob.text.count..<bob.text.count, with: "<b\(n)> ")
                daemon.commit()
                if n % 3 == 0 { ann.deliver() }
                ann.edit(0..<0, with: "a\(n) ")
                daemon.commit()
            }
            ann.disconnect()
        }
        ann.text.insert(contentsOf: Array("OFF ".unicodeScalars), at: 0)
        let daemon = try Self.daemon(at: path, snapshotLogBytes: 64)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        ann.reopen()
        let text = daemon.documents["doc"]?.text.string ?? ""
        for n in 0..<40 {
            #expect(text.components(separatedBy: "<b\(n)>").count == 2, "<b\(n)> in \(text.debugDescription)")
            #expect(text.components(separatedBy: "a\(n) ").count == 2, "a\(n) in \(text.debugDescription)")
        }
        #expect(text.hasPrefix("OFF a39 "), "\(text.prefix(40))")
        #expect(ann.string == text)
    }

    /// A view that was closed is gone: a reopen naming it merges as text (with a base) or is
    /// treated as a plain open.
    @Test func aClosedViewIsNotKept() throws {
        let path = DaemonProcess.temporaryDirectory("durable-view-closed")
        let view: String?
        do {
            let daemon = try Self.daemon(at: path)
            let ann = TestEditor(daemon: daemon)
            ann.initialize(user: "ann")
            ann.open("doc", text: "one\n")
            view = ann.view
            _ = ann.request("document/close", ["uri": "doc"])
            daemon.commit()
        }
        let daemon = try Self.daemon(at: path)
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        ann.uri = "doc"
        ann.text = Array("one\n".unicodeScalars)
        ann.view = view
        #expect(ann.reopen()["result"]?["created"] == false)
        #expect(daemon.documents["doc"]?.text.string == "one\n")
    }
}
