import Foundation
import JSON
import Logging
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import Testing
import QuireTestSupport

/// Local edits are held to the elements a document may hold, the bound every peer holds its copy
/// to (issue 20): whatever path brings an editor's text in (an edit, an open, a resync, a reopen,
/// a merge, an undo, a bound file's outside change), one that would take the document past it is
/// refused with -32018 and changes nothing, so no peer ever has to refuse what this daemon made.
/// The bound is 40 elements here, so that reaching it is cheap.
@Suite struct LocalBoundsTests {
    static let limit = 40

    static func daemon(limit: Int = LocalBoundsTests.limit, store: DocumentStore? = nil) -> Daemon {
        var configuration = Daemon.Configuration()
        configuration.maximumElementsPerDocument = limit
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var next: UInt64 = 500
        return Daemon(configuration: configuration, logger: logger, replicaSource: { next += 1; return ReplicaID(next) }, store: store)
    }

    static func text(of daemon: Daemon, _ uri: String = "doc") -> String? {
        daemon.documents[uri]?.text.string
    }

    /// The -32018 reply `reply` is, with its data as it says.
    static func expectTooLarge(_ reply: JSONValue, elements: Int, adding: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply["error"]?["code"] == .integer(Int64(ResponseError.documentTooLargeCode)), "\(reply)", sourceLocation: sourceLocation)
        let data = reply["error"]?["data"]
        #expect(data?["uri"] == "doc" && data?["limit"] == .integer(Int64(limit)), "\(reply)", sourceLocation: sourceLocation)
        #expect(data?["elements"] == .integer(Int64(elements)) && data?["adding"] == .integer(Int64(adding)), "\(reply)",
                sourceLocation: sourceLocation)
        #expect(reply["error"]?["message"]?.stringValue?.contains("nothing changed") == true, sourceLocation: sourceLocation)
    }

    /// An edit that would pass the bound is refused whole, the document and the other editor
    /// unchanged; the editor's next edits need a resync (its buffer holds the refused text), a
    /// resync keeping that text is refused the same way, and once the editor took the excess
    /// out, the resync keeps its text. Removed characters count until they are dropped, and
    /// removing is always allowed.
    @Test func anEditPastTheBoundIsRefusedAndChangesNothing() {
        let daemon = Self.daemon()
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "hello\n")
        bob.open("doc", text: "")
        #expect(ann.edit(5..<5, with: String(repeating: "a", count: 30))["result"] != nil, "36 elements fit")
        bob.deliver()
        let before = "hello" + String(repeating: "a", count: 30) + "\n"
        #expect(Self.text(of: daemon) == before && bob.string == before)

        Self.expectTooLarge(ann.edit(0..<0, with: "12345"), elements: 36, adding: 5)
        #expect(Self.text(of: daemon) == before, "nothing of the edit went in")
        bob.deliver()
        #expect(bob.string == before && bob.dropped == 0, "bob was sent nothing")
        let next = ann.edit(0..<0, with: "x")
        #expect(next["error"]?["code"] == .integer(Int64(ResponseError.resyncNeededCode)), "based on refused text: \(next)")

        // A resync keeping the buffer's text is held to the bound too.
        let kept = ann.request("document/resync", ["uri": "doc", "text": .string(ann.string), "base": .string(before)])
        Self.expectTooLarge(kept, elements: 36, adding: 6)
        #expect(Self.text(of: daemon) == before)
        // Ann takes her paste out again: the resync keeps what is left of her typing.
        ann.text.removeSubrange(1..<6)
        #expect(ann.string == "x" + before)
        let resynced = ann.request("document/resync", ["uri": "doc", "text": .string(ann.string), "base": .string(before)])
        #expect(resynced["result"]?["text"] == .string("x" + before), "\(resynced)")
        ann.epoch = Int(resynced["result"]?["epoch"]?.integerValue ?? 0)
        ann.editorRevision = 0
        ann.daemonRevision = 0

        // Removing is allowed at the bound; the removed characters still count.
        #expect(ann.edit(1..<11, with: "")["result"] != nil)
        #expect(Self.text(of: daemon) == "x" + before.dropFirst(10))
        Self.expectTooLarge(ann.edit(0..<0, with: "abcd"), elements: 37, adding: 4)
        bob.deliver()
        #expect(bob.string == "x" + before.dropFirst(10))
    }

    /// Opening a new document with more text than the bound creates nothing; with text that fits
    /// it is created. A reopen of an existing document that adds too much changes nothing either.
    @Test func anOpenWithTooMuchTextCreatesNothing() {
        let daemon = Self.daemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        let tooMuch = String(repeating: "z", count: Self.limit) + "\n"
        let reply = ann.open("doc", text: tooMuch)
        Self.expectTooLarge(reply, elements: 0, adding: Self.limit + 1)
        #expect(daemon.documents["doc"] == nil, "no document was made")
        #expect(ann.request("document/list")["result"] == .array([]))
        #expect(ann.open("doc", text: String(repeating: "z", count: Self.limit - 1) + "\n")["result"] != nil, "exactly the bound fits")
        #expect(Self.text(of: daemon)?.unicodeScalars.count == Self.limit)
    }

    /// `document/merge` copies text in, and undo puts removed characters back as new elements:
    /// both are refused past the bound, and the undo step stays to be undone later.
    @Test func mergeAndUndoAreHeldToTheBound() {
        let daemon = Self.daemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        ann.open("other", text: String(repeating: "o", count: 20) + "\n")
        ann.open("doc", text: String(repeating: "d", count: 20) + "\n")
        let merged = ann.request("document/merge", ["uri": "doc", "from": "other"])
        Self.expectTooLarge(merged, elements: 21, adding: 21)
        #expect(Self.text(of: daemon) == String(repeating: "d", count: 20) + "\n")

        // Ann removes 10 characters and types 19: 40 elements. Undoing the removal would put
        // 10 back as new elements.
        #expect(ann.edit(0..<10, with: "")["result"] != nil)
        #expect(ann.edit(0..<0, with: String(repeating: "n", count: 19))["result"] != nil)
        let atBound = String(repeating: "n", count: 19) + String(repeating: "d", count: 10) + "\n"
        #expect(Self.text(of: daemon) == atBound)
        let undone = ann.request("document/undo", ["uri": "doc"])
        #expect(undone["result"]?["done"] == .bool(true), "undoing the typing removes, which always fits: \(undone)")
        ann.deliver()
        let refused = ann.request("document/undo", ["uri": "doc"])
        Self.expectTooLarge(refused, elements: 40, adding: 10)
        #expect(Self.text(of: daemon) == String(repeating: "d", count: 10) + "\n", "the removal was not undone")
        Self.expectTooLarge(ann.request("document/undo", ["uri": "doc"]), elements: 40, adding: 10)
        // The redo step is still there (a step taken would have cleared it): redoing the typing
        // puts 19 characters back as new elements, which do not fit either.
        Self.expectTooLarge(ann.request("document/redo", ["uri": "doc"]), elements: 40, adding: 19)
    }

    /// A bound file changed outside Quire with more text than the document has room for: the
    /// save that would merge it is refused, the file is not written and the document unchanged.
    @Test func aBoundFilesOutsideChangeIsHeldToTheBound() throws {
        let directory = DaemonProcess.temporaryDirectory("local-bounds")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/notes.txt"
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: path))
        let daemon = Self.daemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        #expect(ann.request("document/open", ["uri": "doc", "text": "notes\n", "file": .string(path)])["result"] != nil)
        let outside = "notes\n" + String(repeating: "f", count: 40) + "\n"
        try Data(outside.utf8).write(to: URL(fileURLWithPath: path))
        Self.expectTooLarge(ann.request("document/save", ["uri": "doc"]), elements: 6, adding: 41)
        #expect(Self.text(of: daemon) == "notes\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == outside, "the file was not written over")
    }

    /// An editor that reopens after a restart with more typed than the document has room for
    /// is refused, nothing changes and its view is kept: its next reopen, with the excess taken
    /// out, brings its typing in.
    @Test func aReopenPastTheBoundIsRefusedAndTheViewKept() throws {
        let path = DaemonProcess.temporaryDirectory("local-bounds-reopen")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let ann: TestEditor
        do {
            let first = Self.daemon(store: try DocumentStore(path: path, logger: logger))
            ann = TestEditor(daemon: first)
            ann.initialize(user: "ann")
            ann.open("doc", text: "kept\n")
            first.commit()
            ann.disconnect()
        }
        let daemon = Self.daemon(store: try DocumentStore(path: path, logger: logger))
        ann.text.insert(contentsOf: String(repeating: "t", count: 40).unicodeScalars, at: 4)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        Self.expectTooLarge(ann.reopen(), elements: 5, adding: 40)
        #expect(Self.text(of: daemon) == "kept\n")
        #expect(daemon.dormantViews.views(of: try #require(daemon.documents["doc"]?.id)).count == 1, "the view waits for the next reopen")
        ann.text.removeSubrange(4..<14)
        let reply = ann.reopen()
        #expect(reply["result"] != nil, "\(reply)")
        #expect(Self.text(of: daemon) == "kept" + String(repeating: "t", count: 30) + "\n")
    }

    /// What an editor may add, every peer accepts: two linked daemons with the same bound; ann
    /// types up to it and bob's daemon takes all of it, the link stays up; one more character is
    /// refused on ann's daemon, and the link stays up still.
    @Test func whatALocalEditorMayAddEveryPeerAccepts() {
        let network = PeerTestNetwork()
        let configure: (inout Daemon.Configuration) -> Void = { $0.maximumElementsPerDocument = Self.limit }
        let a = network.makeDaemon(100, configure: configure), b = network.makeDaemon(200, configure: configure)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("doc", text: "start\n")
        let wire = try? network.link(a, b)
        network.pump([a, b])
        #expect(wire?.a?.state == .established && wire?.b?.state == .established)
        for _ in 0..<(Self.limit - 6) {
            #expect(ann.edit(5..<5, with: "k")["result"] != nil)
            network.pump([a, b])
        }
        #expect(Self.text(of: b)?.unicodeScalars.count == Self.limit && Self.text(of: b) == Self.text(of: a))
        #expect(wire?.a?.state == .established && wire?.b?.state == .established, "the peer took every element")
        Self.expectTooLarge(ann.edit(0..<0, with: "!"), elements: Self.limit, adding: 1)
        network.pump([a, b])
        #expect(wire?.a?.state == .established && wire?.b?.state == .established)
        #expect(Self.text(of: b) == Self.text(of: a))
    }
}
