import QuireTestSupport
import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes

/// Local edits reuse this daemon's replica IDs (protocol/decisions/replica-reuse.md): a document
/// edited by hundreds of editor sessions, undos and merges names a handful of replicas, so a
/// linked peer, which refuses a document of more than 1,024 replicas, keeps accepting its
/// frames; and a reused replica never gives two characters one ID, across a restart too.
@Suite struct ReplicaReuseTests {
    /// `count` occurrences of `token` in `text`.
    static func occurrences(of token: String, in text: String) -> Int {
        text.components(separatedBy: token).count - 1
    }

    /// 600 editors come and go on one document of A, linked with B, which accepts at most 256
    /// replicas per document (the default is 1,024; a quarter of it keeps the test short, as
    /// every edit here copies the document): each opens it, types a token, some undo, some
    /// merge another document in, half close and half go away without closing, and some of
    /// those come back with what they typed offline. Before, each session took a replica of its
    /// own and B cut the link once the document named more than it accepts.
    @Test func sixHundredSessionsStayFarBelowTheReplicaBound() throws {
        let network = PeerTestNetwork()
        let cycles = 600
        let a = network.makeDaemon(4_000), b = network.makeDaemon(90_000) { $0.maximumReplicasPerDocument = 256 }
        try network.link(a, b)
        network.pump([a, b])
        let setup = TestEditor(daemon: a)
        setup.initialize(user: "setup")
        setup.open("other", text: "m\n")
        setup.open("doc", text: "start\n")
        _ = setup.request("document/close", ["uri": "doc"])
        _ = setup.request("document/close", ["uri": "other"])
        var away: [TestEditor] = []
        var undone: Set<Int> = [], typedOffline: [String] = [], merges = 0
        for i in 0..<cycles {
            let editor = TestEditor(daemon: a)
            editor.initialize(user: "e\(i)")
            editor.open("doc", text: a.document("doc")?.text.string ?? "")
            editor.edit(editor.text.count..<editor.text.count, with: "<T\(i)>\n")
            if i % 3 == 0 {
                #expect(editor.request("document/undo", ["uri": "doc"])["result"]?["done"] == true)
                undone.insert(i)
            }
            if i % 5 == 0 {
                #expect(editor.request("document/merge", ["uri": "doc", "from": "other"])["error"] == nil)
                merges += 1
            }
            if i % 2 == 0 {
                _ = editor.request("document/close", ["uri": "doc"])
                editor.connection.endOfInput()
            } else {
                editor.connection.endOfInput()
                editor.disconnect()
                away.append(editor)
            }
            // Some come back: the newest (its view kept whole, behind what others typed since) or
            // the oldest (its view kept as texts); each typed a token offline first.
            if i % 7 == 0, !away.isEmpty {
                let back = i % 14 == 0 ? away.removeFirst() : away.removeLast()
                let token = "<R\(i)>"
                back.text.insert(contentsOf: Array("\(token)\n".unicodeScalars), at: 0)
                back.connect(to: a)
                back.initialize(user: "back\(i)")
                let reply = back.reopen()
                #expect(reply["error"] == nil, "reopen \(i): \(reply)")
                typedOffline.append(token)
                _ = back.request("document/close", ["uri": "doc"])
                back.connection.endOfInput()
            }
            if i % 50 == 49 { network.pump([a, b]) }
        }
        network.pump([a, b])

        let document = try #require(a.document("doc"))
        let replicas = document.text.versionVector.counts.count
        #expect(replicas <= 24, "the document names \(replicas) replicas after \(cycles) sessions")
        #expect(a.localReplicas.pooled.count <= 24, "A pooled \(a.localReplicas.pooled.count) replicas")
        #expect(b.links.values.contains { $0.state == .established }, "B still takes A's frames")
        let text = document.text.string
        #expect(b.document("doc")?.text.string == text, "B holds what A holds")
        for i in 0..<cycles {
            #expect(Self.occurrences(of: "<T\(i)>", in: text) == (undone.contains(i) ? 0 : 1), "token \(i)")
        }
        for token in typedOffline { #expect(Self.occurrences(of: token, in: text) == 1, "\(token), typed offline") }
        #expect(Self.occurrences(of: "m\n", in: text) == merges)
    }

    /// Editors open at once never share a replica in one document, and an edit made on a copy of
    /// the document (an undo) never takes a live view's replica: its elements would be missing
    /// from that view's copy, whose next insertion would take their IDs again.
    @Test func liveViewsAndUndoNeverShareAReplica() throws {
        let a = PeerTestNetwork().makeDaemon(5_000)
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "one\n")
        bob.open("doc", text: "one\n")
        ann.edit(0..<0, with: "<A1>")
        #expect(ann.request("document/undo", ["uri": "doc"])["result"]?["done"] == true)
        // Bob types before he hears of the undo (based on a revision without it).
        bob.edit(0..<0, with: "<B1>")
        ann.deliver()
        bob.deliver()
        ann.edit(ann.text.count..<ann.text.count, with: "<A2>")
        bob.deliver()
        let document = try #require(a.document("doc"))
        #expect(document.text.string == "<B1>one\n<A2>")
        #expect(ann.string == document.text.string && bob.string == document.text.string)
        let live = a.sessions.values.compactMap { $0.view(of: "doc")?.replica }
        #expect(Set(live).count == 2, "two live views, two replicas")
    }

    /// A daemon restarted on its data directory takes its pool back and goes on with the same
    /// replicas; what it makes continues past every element they have in the log, so its peer,
    /// which got the first run's edits, takes the second run's as new ones (a repeated ID would
    /// be taken for one it has, and the copies would differ).
    @Test func aRestartReusesThePoolPastEverythingLogged() throws {
        let data = DaemonProcess.temporaryDirectory("replica-reuse")
        let b = PeerTestNetwork().makeDaemon(95_000)
        let pool: [ReplicaID]
        let before: VersionVector
        do {
            let network = PeerTestNetwork()
            let a = network.makeDaemon(6_000, store: try TombstoneCompactionTests.store(data))
            try network.link(a, b)
            let ann = TestEditor(daemon: a)
            ann.initialize(user: "ann")
            ann.open("doc", text: "")
            ann.edit(0..<0, with: "<A1>\n")
            #expect(ann.request("document/undo", ["uri": "doc"])["result"]?["done"] == true)
            #expect(ann.request("document/redo", ["uri": "doc"])["result"]?["done"] == true)
            network.pump([a, b])
            #expect(b.document("doc")?.text.string == "<A1>\n")
            pool = a.localReplicas.pooled
            before = try #require(a.document("doc")).text.versionVector
            ann.connection.endOfInput()
            ann.disconnect()   // no shutdown: the daemon goes away as under kill -9
            for link in b.links.values { link.close("the peer went away") }
        }
        let network = PeerTestNetwork()
        let a = network.makeDaemon(7_000, store: try TombstoneCompactionTests.store(data))
        #expect(a.localReplicas.pooled == pool, "the pool came back")
        let bob = TestEditor(daemon: a)
        bob.initialize(user: "bob")
        bob.open("doc", text: "<A1>\n")
        bob.edit(5..<5, with: "<B2>\n")
        #expect(bob.request("document/undo", ["uri": "doc"])["result"]?["done"] == true)
        #expect(bob.request("document/redo", ["uri": "doc"])["result"]?["done"] == true)
        let after = try #require(a.document("doc")).text.versionVector
        #expect(Set(after.counts.keys) == Set(before.counts.keys), "no new replica: \(before) -> \(after)")
        #expect(pool.contains { after[$0] > before[$0] }, "a pooled replica went on past what was logged")
        try network.link(a, b)
        network.pump([a, b])
        #expect(b.document("doc")?.text.string == "<A1>\n<B2>\n")
        #expect(a.document("doc")?.text.string == "<A1>\n<B2>\n")
        #expect(b.links.values.contains { $0.state == .established })
    }

    /// After a restart a kept view no longer says which replica it edited as, and the one it
    /// did may be lent to another editor, who types: the view's copy then lacks that editor's
    /// elements, so its reopen takes another replica, whose elements it holds all of. The
    /// reopen's insertion is a new element, and the peer gets it.
    @Test func aViewLeftBehindTakesAReplicaItsCopyIsCurrentFor() throws {
        let data = DaemonProcess.temporaryDirectory("replica-behind")
        let ann: TestEditor
        do {
            let a = PeerTestNetwork().makeDaemon(8_000, store: try TombstoneCompactionTests.store(data))
            ann = TestEditor(daemon: a)
            ann.initialize(user: "ann")
            ann.open("doc", text: "x\n")
            ann.connection.endOfInput()
            ann.disconnect()
        }
        let network = PeerTestNetwork()
        let a = network.makeDaemon(8_100, store: try TombstoneCompactionTests.store(data)), b = network.makeDaemon(96_000)
        try network.link(a, b)
        let bob = TestEditor(daemon: a)
        bob.initialize(user: "bob")
        bob.open("doc", text: "x\n")
        let bobReplica = try #require(a.sessions.values.first { $0.view(of: "doc") != nil }?.view(of: "doc")?.replica)
        #expect(a.localReplicas.pooled.first == bobReplica, "bob reuses the first run's replica")
        bob.edit(2..<2, with: "<B1>\n")
        ann.text.insert(contentsOf: Array("<A1>".unicodeScalars), at: 0)
        ann.connect(to: a)
        ann.initialize(user: "ann")
        #expect(ann.reopen()["error"] == nil)
        let annReplica = try #require(a.sessions.values.first { $0.view(of: "doc") != nil && $0 !== a.sessions.values.first { $0.view(of: "doc")?.replica == bobReplica } }?.view(of: "doc")?.replica)
        #expect(annReplica != bobReplica)
        network.pump([a, b])
        bob.deliver()
        ann.deliver()
        #expect(a.document("doc")?.text.string == "<A1>x\n<B1>\n")
        #expect(b.document("doc")?.text.string == "<A1>x\n<B1>\n")
        #expect(ann.string == "<A1>x\n<B1>\n" && bob.string == ann.string)
    }

    /// Under `--durability batch` a crash may take back edits a peer already has, so a replica
    /// of the previous run is never continued: each run starts a pool of its own.
    @Test func aBatchDaemonStartsEachRunWithAFreshPool() throws {
        let data = DaemonProcess.temporaryDirectory("replica-batch")
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var first: [ReplicaID] = []
        do {
            let a = PeerTestNetwork().makeDaemon(10_000, store: try DocumentStore(path: data, durability: .batch, logger: logger))
            let ann = TestEditor(daemon: a)
            ann.initialize(user: "ann")
            ann.open("doc", text: "one\n")
            a.syncStorage()
            first = a.localReplicas.pooled
            ann.connection.endOfInput()
            ann.disconnect()
        }
        #expect(!first.isEmpty)
        // The same source of IDs as the first run: what it would mint first is in the document already.
        let a = PeerTestNetwork().makeDaemon(10_000, store: try DocumentStore(path: data, durability: .batch, logger: logger))
        #expect(a.localReplicas.pooled.isEmpty, "nothing of the last run is lent again")
        let bob = TestEditor(daemon: a)
        bob.initialize(user: "bob")
        bob.open("doc", text: "one\n")
        bob.edit(4..<4, with: "two\n")
        #expect(Set(a.localReplicas.pooled).isDisjoint(with: first))
        #expect(a.document("doc")?.text.string == "one\ntwo\n")
    }

    /// The pool's rule on its own: a copy behind the document on a replica never gets it.
    @Test func thePoolLendsOnlyReplicasACopyIsCurrentFor() {
        var next: UInt64 = 100
        let pool = LocalReplicas(mint: { next += 1; return ReplicaID(next) })
        var document = ReplicatingText(replica: ReplicaID(0))
        let first = pool.pick(forEditing: nil, of: document, avoiding: [])
        let old = document
        document.replica = first
        document.replace(0..<0, with: Array("abc".unicodeScalars))
        #expect(pool.pick(forEditing: nil, of: document, avoiding: []) == first, "a fresh copy reuses it")
        let second = pool.pick(forEditing: old, of: document, avoiding: [])
        #expect(second != first, "the old copy lacks what the first made")
        #expect(pool.pick(forEditing: nil, of: document, avoiding: [first]) == second, "a lent replica is avoided")
        pool.retire([first])
        #expect(pool.pick(forEditing: nil, of: document, avoiding: []) == second, "a retired one is never lent again")
        #expect(pool.pooled == [second])
    }
}
