import QuireTestSupport
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import ReplicatingTypes

/// Editors that open a document and leave without closing it cost memory, bounded in bytes, and
/// never push a returning editor out: its reopen merges with nothing asked
/// (protocol/decisions/durable-views.md, *Kept views and their cost*). Before, past 8 kept and 8
/// detached views the oldest went, and its editor's reopen was refused with -32017.
@Suite struct ManyEditorsLeaveTests {
    /// `count` editors each open "doc", type a token and go away without closing.
    static func comeAndGo(_ count: Int, on daemon: Daemon, from first: Int = 0) -> [TestEditor] {
        (first..<(first + count)).map { n in
            let editor = TestEditor(daemon: daemon)
            editor.initialize(user: "e\(n)")
            editor.open("doc", text: daemon.document("doc")?.text.string ?? "")
            editor.edit(editor.text.count..<editor.text.count, with: "<e\(n)>\n")
            editor.connection.endOfInput()
            editor.disconnect()
            return editor
        }
    }

    @Test func aHundredEditorsComeAndGoAndTheFirstStillMergesAcrossARestart() throws {
        let path = DaemonProcess.temporaryDirectory("many-leave")
        let ann: TestEditor
        do {
            let daemon = try DurableViewEdgeTests.daemon(at: path, replicas: 100)
            ann = TestEditor(daemon: daemon)
            ann.initialize(user: "ann")
            ann.open("doc", text: "start\n")
            ann.edit(ann.text.count..<ann.text.count, with: "<ann1>\n")
            ann.connection.endOfInput()
            ann.disconnect()
            _ = Self.comeAndGo(100, on: daemon)
            let document = try #require(daemon.document("doc"))
            #expect(daemon.dormantViews.detachedViews(of: document.id).count == 101 - DormantViews.maximumPerDocument)
            #expect(daemon.dormantViews.detachedByteCount(of: document.id) <= daemon.configuration.maximumDetachedViewBytesPerDocument)
        }
        let daemon = try DurableViewEdgeTests.daemon(at: path, replicas: 300)
        ann.text.insert(contentsOf: Array("<ann-off>".unicodeScalars), at: 0)
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        let reply = ann.reopen()
        #expect(reply["error"] == nil, "ann is not asked: \(reply)")
        let text = try #require(daemon.document("doc")).text.string
        for token in ["<ann-off>", "<ann1>"] + (0..<100).map({ "<e\($0)>" }) {
            #expect(ReplicaReuseTests.occurrences(of: token, in: text) == 1, "\(token) in \(text.debugDescription)")
        }
        #expect(ann.string == text)
    }

    /// With a bound of a few hundred bytes, the detached views of the oldest editors go first
    /// and the bytes held stay within it; the newest's reopen still merges, the oldest's asks.
    @Test func aTinyByteBoundLetsTheOldestGoFirst() throws {
        let bound = 600
        let daemon = PeerTestNetwork().makeDaemon(200) { $0.maximumDetachedViewBytesPerDocument = bound }
        let editors = Self.comeAndGo(40, on: daemon)
        let document = try #require(daemon.document("doc"))
        let detached = daemon.dormantViews.detachedViews(of: document.id)
        #expect(daemon.dormantViews.detachedByteCount(of: document.id) <= bound)
        #expect(daemon.dormantViews.detachedByteCount(of: document.id) == detached.reduce(0) { $0 + $1.byteCount })
        #expect(!detached.isEmpty && detached.count < 40 - DormantViews.maximumPerDocument, "\(detached.count) detached views kept")
        // The ones kept are the newest of those pushed out, in order.
        let pushedOut = editors.dropLast(DormantViews.maximumPerDocument).compactMap(\.view)
        #expect(detached.map(\.id) == Array(pushedOut.suffix(detached.count)))

        let oldest = editors[0], newest = editors[pushedOut.count - 1]
        for editor in [oldest, newest] {
            editor.text.append(contentsOf: Array("<off>\n".unicodeScalars))
            editor.connect(to: daemon)
            editor.initialize(user: "back")
        }
        #expect(newest.reopen()["error"] == nil)
        #expect(oldest.reopen()["error"]?["code"] == -32017, "its texts went: the person is asked")
    }
}
