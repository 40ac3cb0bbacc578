import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// A peer that holds the secret and turns hostile, speaking the protocol by hand on a sealed
/// link (issue 20, items 1 to 6 and 17): every frame that breaks a bound is refused with a logged
/// reason before anything of it is applied, the daemon keeps serving its editor, what it holds
/// stays within its bounds, and nothing acknowledged is lost.
@Suite struct HostilePeerTests {
    typealias Op = ReplicatingArrayOperation<Unicode.Scalar>

    /// The attacker's side of one sealed link to `victim`: a daemon of its own whose link frames
    /// are sealed for it, every byte carried by hand, and frames of any content sent on it.
    final class HostilePeer {
        let victim: Daemon
        let attacker: Daemon
        let toVictim: PeerLink
        let fromVictim: () -> [[UInt8]]
        let link: PeerLink
        let fromLink: () -> [[UInt8]]
        private var delivered = 0

        init(_ net: PeerTestNetwork, victim: Daemon, base: UInt64) throws {
            self.victim = victim
            attacker = net.makeDaemon(base)
            (toVictim, fromVictim) = try PeerSecurityTests.attackerLink(to: victim)
            (link, fromLink) = try PeerSecurityTests.attackerLink(to: attacker, incoming: false)
            PeerSecurityTests.forward(victim, toVictim, fromVictim, attacker, link, fromLink)
            delivered = fromLink().count
        }

        /// Sends `frame`, sealed on the attacker's link, and delivers it to the victim.
        func send(_ frame: PeerFrame) {
            link.send(frame)
            let chunks = fromLink().dropFirst(delivered)
            delivered = fromLink().count
            for chunk in chunks { toVictim.receive(chunk) }
            victim.flush()
            victim.commit()
        }

        /// Sends `frames`, sealed, and delivers them to the victim as one read.
        func send(_ frames: [PeerFrame]) {
            for frame in frames { link.send(frame) }
            let chunks = fromLink().dropFirst(delivered)
            delivered = fromLink().count
            toVictim.receive(chunks.flatMap { $0 })
            victim.flush()
            victim.commit()
        }

        func sendOperations(_ operations: [Op], uri: String = "notes", id: UInt64? = nil) {
            send(.operations(uri: uri, documentID: id ?? victim.documents[uri]?.id ?? 1, payload: ReplicatingArrayCoding.encode(operations)))
        }
    }

    /// Daemon A with Ann editing "notes", and a hostile peer linked to it.
    static func victim() throws -> (PeerTestNetwork, Daemon, TestEditor, HostilePeer) {
        let net = PeerTestNetwork()
        let (a, ann) = PeerSecurityTests.daemonWithNotes(net, 100)
        let peer = try HostilePeer(net, victim: a, base: 200)
        #expect(peer.toVictim.state == .established, "the hostile peer holds the secret")
        return (net, a, ann, peer)
    }

    static func insertion(replica: UInt64, counter: UInt64 = 0, lamport: UInt64, text: String = "x", removed: Int? = nil) -> Op {
        .insert(ReplicatingArrayInsertion(id: ElementID(replica: ReplicaID(replica), counter: counter), lamport: lamport, anchor: nil,
                                          content: removed.map { .removed(count: $0) } ?? .elements(InsertedElements(Array(text.unicodeScalars)))))
    }

    /// After an attack: the victim is alive, still takes and acknowledges its editor's edits,
    /// and kept everything acknowledged before.
    static func stillServes(_ a: Daemon, _ ann: TestEditor, typedBefore: String = PeerSecurityTests.privateText) {
        let reply = ann.edit(ann.text.count..<ann.text.count, with: "!")
        #expect(reply["result"]?["editorRevision"] != nil, "the editor's edit is acknowledged: \(reply)")
        #expect(a.documents["notes"]?.text.string == typedBefore + "!", "nothing acknowledged was lost")
    }

    static func elementCount(_ document: SharedDocument?) -> UInt64 {
        document?.text.versionVector.counts.values.reduce(0, +) ?? 0
    }

    // MARK: 1. Lamport counters

    /// Item 1: an insertion at Lamport counter 2^64-2 used to be taken, and the next keystroke
    /// trapped. It is refused before it is applied or relayed.
    @Test func aLamportCounterFarAheadIsRefused() throws {
        let (net, a, ann, peer) = try Self.victim()
        let bystander = net.makeDaemon(300)
        let wire = try net.link(a, bystander)
        net.pump([a, bystander])
        peer.sendOperations([Self.insertion(replica: 999, lamport: UInt64.max - 1)])
        #expect(peer.toVictim.state == .closed)
        #expect(peer.toVictim.closeReason?.contains("Lamport counter 18446744073709551614 is beyond what this daemon accepts") == true,
                "\(String(describing: peer.toVictim.closeReason))")
        let notes = try #require(a.documents["notes"])
        #expect(notes.text.versionVector[ReplicaID(999)] == 0, "nothing of the frame was applied")
        #expect(notes.text.scalars.lamportClock < 1 << 32)
        net.pump([a, bystander])
        #expect(bystander.documents["notes"]?.text.versionVector[ReplicaID(999)] == 0, "nor relayed")
        #expect(wire.a?.state == .established)
        Self.stillServes(a, ann)
    }

    /// Within the lead, a counter ahead of the clock is an ordinary concurrent edit.
    @Test func aLamportCounterWithinTheLeadIsTaken() throws {
        let (_, a, ann, peer) = try Self.victim()
        peer.sendOperations([Self.insertion(replica: 999, lamport: 1 << 31, text: ">")])
        #expect(peer.toVictim.state == .established)
        #expect(a.documents["notes"]?.text.string == ">" + PeerSecurityTests.privateText)
        ann.deliverInbox()
        Self.stillServes(a, ann, typedBefore: ">" + PeerSecurityTests.privateText)
    }

    /// A copy whose clock has no counters left refuses an edit with an error, never a trap.
    @Test func anExhaustedClockRefusesAnEditWithAnError() throws {
        let net = PeerTestNetwork()
        let (a, ann) = PeerSecurityTests.daemonWithNotes(net, 100)
        let notes = try #require(a.documents["notes"])
        notes.apply([Self.insertion(replica: 999, counter: 0, lamport: UInt64.max - 1)])   // as a copy from before the bounds could hold
        let reply = ann.edit(0..<0, with: "x")
        #expect(reply["error"]?["message"]?.stringValue?.contains("Lamport clock is exhausted") == true, "\(reply)")
    }

    // MARK: 2. Times

    /// Item 2: a stability echo whose holder time is Int64.max made the daemon trap when it
    /// wrote its own echo. The time is kept within the present, and written safely.
    @Test func aHolderTimeFromTheFarFutureIsClampedAndWrittenSafely() throws {
        let (net, a, ann, parent) = try Self.victim()
        let child = try HostilePeer(net, victim: a, base: 400)
        let notes = try #require(a.documents["notes"])
        let sentBefore = parent.fromVictim().count
        parent.send(.stability(["uri": "notes", "id": .string(String(notes.id)), "round": "999:1", "phase": "ask"]))
        child.send(.stability(["uri": "notes", "id": .string(String(notes.id)), "round": "999:1", "phase": "echo", "ok": true,
                               "reached": ["401"], "holders": ["5": .integer(Int64.max), "6": .integer(Int64.min)]]))
        #expect(parent.fromVictim().count > sentBefore, "the victim answered its parent with its own echo")
        #expect(parent.toVictim.state == .established && child.toVictim.state == .established)
        let times = DocumentSharing.holderTimes(["5": .integer(Int64.max), "6": .integer(-7)], notAfter: 1_700_000_000)
        #expect(times == [ReplicaID(5): 1_700_000_000, ReplicaID(6): 0])
        #expect(DocumentSharing.wholeSeconds(Double(Int64.max)) == Int64.max && DocumentSharing.wholeSeconds(.nan) == 0)
        Self.stillServes(a, ann)
    }

    // MARK: 3. Counts and runs

    /// Item 3: a run of 2^26 removed elements with no content (a 49-byte frame) used to cost
    /// 800 MB. It counts for what it claims, and is refused.
    @Test func aHugeRunOfRemovedElementsIsRefused() throws {
        let (_, a, ann, peer) = try Self.victim()
        let before = Self.elementCount(a.documents["notes"])
        peer.sendOperations([Self.insertion(replica: 999, lamport: 40, removed: 1 << 26)])
        #expect(peer.toVictim.closeReason?.contains("67108864 new elements in one frame exceed the limit of 4194304") == true,
                "\(String(describing: peer.toVictim.closeReason))")
        #expect(Self.elementCount(a.documents["notes"]) == before, "no index was made for them")
        Self.stillServes(a, ann)
    }

    /// A counter that skips ahead commits the document to everything it skips: refused too.
    @Test func aCounterThatSkipsFarAheadIsRefused() throws {
        let (_, a, ann, peer) = try Self.victim()
        peer.sendOperations([Self.insertion(replica: 999, counter: 1 << 40, lamport: 40)])
        #expect(peer.toVictim.closeReason?.contains("new elements in one frame exceed") == true, "\(String(describing: peer.toVictim.closeReason))")
        #expect(a.documents["notes"]?.text.scalars.pendingOperationCount == 0, "nothing waits for the skipped counters")
        Self.stillServes(a, ann)
    }

    /// Item 4: a whole-state frame claiming `known = 2^40` for one replica used to allocate its
    /// index before any check.
    @Test func aStateClaimingHugeCountsIsRefusedBeforeItIsBuilt() throws {
        let (_, a, ann, peer) = try Self.victim()
        var state = BinaryWriter()
        state.write(2)                  // document-order state
        state.writeVarint(1)            // one replica
        state.writeVarint(999)
        state.writeVarint(1 << 40)      // "known"
        state.writeVarint(0)            // no runs: all of it "compacted"
        peer.send(.state(uri: "fresh", documentID: 77, payload: state.bytes))
        #expect(peer.toVictim.closeReason?.contains("undecodable state of fresh") == true, "\(String(describing: peer.toVictim.closeReason))")
        #expect(a.documents["fresh"] == nil)
        Self.stillServes(a, ann)
    }

    /// Item 5: one character from each of 60,000 replicas used to cost 257 MB per document.
    /// New replicas are bounded per frame, and per document across frames.
    @Test func oneCharacterFromEachOfManyReplicasIsRefused() throws {
        let (_, a, ann, peer) = try Self.victim()
        let many = (0..<65).map { Self.insertion(replica: 10_000 + UInt64($0), lamport: 40 + UInt64($0)) }
        peer.sendOperations(many)
        #expect(peer.toVictim.closeReason?.contains("65 new replicas in one frame exceed the limit of 64") == true,
                "\(String(describing: peer.toVictim.closeReason))")
        #expect(a.documents["notes"]?.text.versionVector.counts.count == 1, "none of them was taken")
        Self.stillServes(a, ann)
    }

    @Test func replicasAcrossFramesAreBoundedPerDocument() throws {
        let (net, a, _, _) = try Self.victim()
        let peer = try HostilePeer(net, victim: a, base: 500)
        var next: UInt64 = 10_000
        for _ in 0..<20 where peer.toVictim.state == .established {
            peer.sendOperations((0..<64).map { _ in next += 1; return Self.insertion(replica: next, lamport: 40) })
        }
        #expect(peer.toVictim.closeReason?.contains("replicas in one document exceed the limit of 1024") == true,
                "\(String(describing: peer.toVictim.closeReason))")
        #expect((a.documents["notes"]?.text.versionVector.counts.count ?? 0) <= a.configuration.maximumReplicasPerDocument)
        #expect(a.documents["notes"]?.text.string.hasSuffix(PeerSecurityTests.privateText) == true)
    }

    /// A frame with more operations than allowed is refused while it is decoded, before the
    /// operations are built.
    @Test func tooManyOperationsInOneFrameAreRefusedWhileDecoding() throws {
        let (_, a, ann, peer) = try Self.victim()
        var batch = BinaryWriter()
        batch.write(1)
        batch.writeVarint(0)
        batch.writeVarint(1 << 24)   // operations claimed
        batch.write(contentsOf: [UInt8](repeating: 2, count: 30_000))
        peer.send(.operations(uri: "notes", documentID: a.documents["notes"]?.id ?? 0, payload: batch.bytes))
        #expect(peer.toVictim.closeReason?.contains("undecodable operations for notes") == true, "\(String(describing: peer.toVictim.closeReason))")
        Self.stillServes(a, ann)
    }

    // MARK: 5. Names and reasons

    /// Item 17: document names with control characters (ESC, the C1 CSI U+009B) or of many
    /// bytes are refused before they are logged, shown or stored; the reason says so safely.
    @Test(arguments: ["evil\u{1B}[2Jname", "csi\u{9B}31m", "rtl\u{202E}txt.exe", String(repeating: "n", count: 5_000)])
    func aDocumentNameThatIsNotCleanIsRefused(name: String) throws {
        let (_, a, ann, peer) = try Self.victim()
        peer.send(.documents(["initial": false, "documents": [["uri": .string(name), "id": "5", "version": [:]]]]))
        let reason = try #require(peer.toVictim.closeReason)
        #expect(reason.contains("document name"), "\(reason)")
        #expect(!reason.unicodeScalars.contains { DocumentName.isUnsafe($0) } && reason.count <= PeerLink.maximumReasonLength)
        #expect(a.documents.count == 1)
        #expect(ann.take("window/showMessage").isEmpty, "nothing was shown to the editor")
        Self.stillServes(a, ann)
    }

    @Test func aDocumentNameInOperationsIsCheckedToo() throws {
        let (_, a, ann, peer) = try Self.victim()
        peer.sendOperations([Self.insertion(replica: 999, lamport: 40)], uri: "x\u{9B}y", id: 5)
        #expect(peer.toVictim.closeReason?.contains("control or format characters: \"xy\"") == true, "\(String(describing: peer.toVictim.closeReason))")
        #expect(a.documents.count == 1)
        Self.stillServes(a, ann)
    }

    /// Round IDs and epochs are stored in a document's metadata and logged: only the form daemons make.
    @Test func aStabilityRoundIDThatIsNotOneIsRefused() throws {
        let (_, a, ann, peer) = try Self.victim()
        let id = JSONValue.string(String(a.documents["notes"]?.id ?? 0))
        peer.send(.stability(["uri": "notes", "id": id, "round": "1:2\u{1B}[31m", "phase": "ask"]))
        #expect(peer.toVictim.closeReason?.contains("a stability round ID that is not <replica>:<number>: \"1:2[31m\"") == true,
                "\(String(describing: peer.toVictim.closeReason))")
        let second = try HostilePeer(PeerTestNetwork(), victim: a, base: 600)
        second.send(.documents(["initial": false, "documents": [["uri": "notes", "id": id, "version": [:], "epochs": ["7:1", .string(String(repeating: "9", count: 5_000))]]]]))
        #expect(second.toVictim.closeReason?.contains("an epoch that is not a round ID") == true, "\(String(describing: second.toVictim.closeReason))")
        #expect(a.documents["notes"]?.sharing.epochs.isEmpty == true)
        Self.stillServes(a, ann)
    }

    @Test func aDocumentListLongerThanTheCapIsRefused() throws {
        let (_, a, ann, peer) = try Self.victim()
        let entries: [JSONValue] = (0...a.configuration.maximumDocumentsPerList).map { ["uri": .string("d\($0)"), "id": .string(String($0 + 1)), "version": [:]] }
        peer.send(.documents(["initial": false, "documents": .array(entries)]))
        #expect(peer.toVictim.closeReason?.contains("documents in one list exceed the limit of \(a.configuration.maximumDocumentsPerList)") == true, "\(String(describing: peer.toVictim.closeReason))")
        #expect(a.documents.count == 1)
        Self.stillServes(a, ann)
    }

    /// A goodbye's reason with C1 controls and bidirectional overrides reaches the log and the
    /// editors cleaned and cut.
    @Test func aCloseReasonIsCleanedAndBounded() throws {
        let (_, a, ann, peer) = try Self.victim()
        peer.send(.bye(reason: "bye\u{9B}2J\u{1B}]0;owned\u{7}" + String(repeating: "\u{202E}z", count: 2_000)))
        let reason = try #require(peer.toVictim.closeReason)
        #expect(!reason.unicodeScalars.contains { DocumentName.isUnsafe($0) }, "\(reason.debugDescription)")
        #expect(reason.count <= PeerLink.maximumReasonLength)
        for message in ann.take("peer/changed") {
            #expect(message["params"]?["reason"]?.stringValue?.unicodeScalars.contains { DocumentName.isUnsafe($0) } != true)
        }
        Self.stillServes(a, ann)
    }

    /// An editor may not open a name peers would refuse either, so honest daemons never send one.
    @Test func anEditorCannotOpenAnUnsafeName() {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100)
        let ann = TestEditor(daemon: a)
        ann.initialize()
        let reply = ann.request("document/open", ["uri": "a\u{9B}b", "text": ""])
        #expect(reply["error"]?["message"]?.stringValue?.contains("control or format characters") == true, "\(reply)")
    }
}
