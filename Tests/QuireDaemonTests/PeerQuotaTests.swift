import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// A writer peer turned hostile, speaking the protocol by hand on a sealed link, tries to fill
/// the victim's memory and disk with many documents, each within the per-document bounds. The
/// scope's quota (documents, and characters across documents) refuses the frame that would pass
/// it, naming the quota, before anything of it is made; the victim keeps serving its editor.
@Suite struct PeerQuotaTests {
    typealias Op = ReplicatingArrayOperation<Unicode.Scalar>
    typealias HostilePeer = HostilePeerTests.HostilePeer

    /// Daemon A with Ann editing "notes" under the quotas `configure` sets, and a hostile peer.
    static func victim(_ configure: (inout Daemon.Configuration) -> Void) throws -> (Daemon, TestEditor, HostilePeer) {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100, configure: configure)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: PeerSecurityTests.privateText)
        let peer = try HostilePeer(net, victim: a, base: 200)
        #expect(peer.toVictim.state == .established)
        return (a, ann, peer)
    }

    static func text(_ count: Int, replica: UInt64 = 999, lamport: UInt64 = 1) -> Op {
        HostilePeerTests.insertion(replica: replica, lamport: lamport, text: String(repeating: "x", count: count))
    }

    static func reason(_ peer: HostilePeer) -> String { peer.toVictim.closeReason ?? "(still open)" }

    @Test func documentsPastTheScopesQuotaAreRefused() throws {
        let (a, ann, peer) = try Self.victim { $0.maximumDocumentsPerScope = 5 }
        for i in 0..<10 where peer.toVictim.state == .established {
            peer.sendOperations([Self.text(3)], uri: "spam\(i)", id: 1_000 + UInt64(i))
        }
        #expect(Self.reason(peer).contains("the quota of general is 5 documents, and it holds 5: no new document \"spam4\""), "\(Self.reason(peer))")
        #expect(Self.reason(peer).contains("--peer-quota-documents"))
        #expect(a.documents.count == 5, "notes and four of the peer's; nothing of the fifth was made")
        #expect(a.documents["spam4"] == nil)
        HostilePeerTests.stillServes(a, ann)
    }

    @Test func charactersAcrossDocumentsPastTheScopesQuotaAreRefused() throws {
        let held = PeerSecurityTests.privateText.unicodeScalars.count
        let (a, ann, peer) = try Self.victim { $0.maximumElementsPerScope = held + 1_000 }
        for i in 0..<10 where peer.toVictim.state == .established {
            peer.sendOperations([Self.text(300)], uri: "big\(i)", id: 2_000 + UInt64(i))
        }
        #expect(Self.reason(peer).contains("the quota of general is \(held + 1_000) characters (removed ones included), and it holds \(held + 900): "
                                           + "300 more for \"big3\" would pass it"), "\(Self.reason(peer))")
        #expect(a.documents["big3"] == nil, "no document was made for the refused frame")
        #expect(a.documents.count == 4)
        #expect(a.registry.usage.totals(of: .general) == ScopeUsage.Totals(documents: 4, elements: UInt64(held + 900)))
        HostilePeerTests.stillServes(a, ann)
    }

    /// Insert-then-remove loops never grow the text, but every removed character stays as a
    /// tombstone: they count against the quota as they cost, so history alone cannot pass it.
    @Test func removedCharactersCountAgainstTheQuota() throws {
        let held = PeerSecurityTests.privateText.unicodeScalars.count
        let (a, ann, peer) = try Self.victim { $0.maximumElementsPerScope = held + 500 }
        let notes = try #require(a.documents["notes"])
        var counter: UInt64 = 0
        for round in 0..<20 where peer.toVictim.state == .established {
            let insert = HostilePeerTests.insertion(replica: 999, counter: counter, lamport: 100 + UInt64(round) * 100,
                                                    text: String(repeating: "y", count: 50))
            peer.sendOperations([insert, .remove([ElementIDRange(start: ElementID(replica: ReplicaID(999), counter: counter), count: 50)])],
                                uri: "notes", id: notes.id)
            counter += 50
        }
        #expect(Self.reason(peer).contains("characters (removed ones included), and it holds \(held + 500): 50 more for \"notes\""), "\(Self.reason(peer))")
        #expect(notes.text.string == PeerSecurityTests.privateText)
        #expect(notes.text.versionVector[ReplicaID(999)] == 500, "ten rounds fit; the eleventh was refused whole")
        HostilePeerTests.stillServes(a, ann)
    }

    @Test func aWholeStatePastTheQuotaIsRefusedBeforeItIsTaken() throws {
        let held = PeerSecurityTests.privateText.unicodeScalars.count
        let (a, ann, peer) = try Self.victim { $0.maximumElementsPerScope = held + 100 }
        let state = ReplicatingText(String(repeating: "z", count: 101), replica: ReplicaID(999))
        peer.send(.state(uri: "whole", documentID: 77, payload: state.encodedState()))
        #expect(Self.reason(peer).contains("state of whole: the quota of general is \(held + 100) characters"), "\(Self.reason(peer))")
        #expect(a.documents["whole"] == nil)
        HostilePeerTests.stillServes(a, ann)
    }

    @Test func aDocumentListPastTheQuotaIsRefused() throws {
        let (a, ann, peer) = try Self.victim { $0.maximumDocumentsPerScope = 3 }
        let entries: [JSONValue] = (0..<5).map { ["uri": .string("listed\($0)"), "id": .string(String(3_000 + $0)), "version": ["999": 4]] }
        peer.send(.documents(["initial": false, "documents": .array(entries)]))
        #expect(Self.reason(peer).contains("the quota of general is 3 documents, and it holds 3: no new document \"listed2\""), "\(Self.reason(peer))")
        #expect(a.documents.count == 3)
        HostilePeerTests.stillServes(a, ann)
    }

    /// A scope over its quota by its own editors' typing still takes a peer's removals (they add
    /// nothing), and refuses only what would add.
    @Test func aScopeOverItsQuotaStillTakesRemovals() throws {
        let (a, ann, peer) = try Self.victim { $0.maximumElementsPerScope = 10 }
        let notes = try #require(a.documents["notes"])
        let (replica, _) = try #require(notes.text.versionVector.counts.first)
        peer.sendOperations([.remove([ElementIDRange(start: ElementID(replica: replica, counter: 0), count: 8)])], uri: "notes", id: notes.id)
        #expect(peer.toVictim.state == .established, "\(Self.reason(peer))")
        #expect(notes.text.string == String(PeerSecurityTests.privateText.dropFirst(8)))
        ann.deliverInbox()
        peer.sendOperations([Self.text(1, lamport: 500)], uri: "notes", id: notes.id)
        #expect(Self.reason(peer).contains("the quota of general is 10 characters"), "\(Self.reason(peer))")
    }

    /// Presence is bounded per document (1,024 editors); a peer naming new editors in document
    /// after document is bounded across them too.
    @Test func presenceAcrossDocumentsIsBoundedPerLink() throws {
        let (a, ann, peer) = try Self.victim { $0.maximumPeerPresencesPerLink = 10 }
        for i in 0..<3 { peer.sendOperations([Self.text(1)], uri: "doc\(i)", id: 4_000 + UInt64(i)) }
        var sent = 0
        for i in 0..<3 {
            let id = JSONValue.string(String(4_000 + i))
            for editor in 0..<4 where peer.toVictim.state == .established {
                peer.send(.presence(["uri": .string("doc\(i)"), "id": id, "origin": .string("999:\(editor)"), "sequence": "1",
                                     "user": ["name": "x"], "selections": [["start", "start"]]]))
                sent += 1
            }
        }
        #expect(sent == 11)
        #expect(Self.reason(peer).contains("more than 10 editors' presence across documents from one link"), "\(Self.reason(peer))")
        #expect(a.documents.values.map(\.peerPresences.count).reduce(0, +) == 0, "what the link brought went with it")
        HostilePeerTests.stillServes(a, ann)
    }

    /// One removal of 20,000 one-element ranges over replicas this daemon never saw used to be
    /// applied (each range left waiting for its elements) before the link was cut for too many
    /// waiting operations; every reconnect added as many again. It is refused before any of it
    /// is applied.
    @Test func removalsOfUnknownElementsCannotPileUpWaiting() throws {
        let net = PeerTestNetwork()
        let (a, ann) = PeerSecurityTests.daemonWithNotes(net, 100)
        let notes = try #require(a.documents["notes"])
        for attempt in 0..<3 {
            let peer = try HostilePeer(net, victim: a, base: 200 + UInt64(attempt) * 100)
            let ranges = (0..<20_000).map { ElementIDRange(start: ElementID(replica: ReplicaID(50_000 + UInt64($0)), counter: 0), count: 1) }
            peer.sendOperations([.remove(ElementIDRanges(ranges))], uri: "notes", id: notes.id)
            #expect(Self.reason(peer).contains("a removal of elements this copy does not hold would make more than 10000 operations wait"),
                    "\(Self.reason(peer))")
            #expect(notes.text.scalars.pendingOperationCount == 0, "nothing of it waits")
        }
        HostilePeerTests.stillServes(a, ann)
    }

    /// A frame that inserts elements and removes them (an honest catch-up does) leaves nothing waiting.
    @Test func removalsOfElementsTheFrameInsertsDoNotCountAsWaiting() throws {
        let (a, _, peer) = try Self.victim { $0.maximumBufferedOperations = 2 }
        let insertions = (0..<5).map { HostilePeerTests.insertion(replica: 999, counter: UInt64($0) * 2, lamport: 100 + UInt64($0) * 2, text: "qz") }
        let removals = (0..<5).map { ElementIDRange(start: ElementID(replica: ReplicaID(999), counter: UInt64($0) * 2), count: 1) }
        peer.sendOperations(insertions + [.remove(ElementIDRanges(removals))], uri: "notes", id: try #require(a.documents["notes"]).id)
        #expect(peer.toVictim.state == .established, "\(Self.reason(peer))")
        #expect(a.documents["notes"]?.text.string.filter { $0 == "z" }.count == 5 && a.documents["notes"]?.text.string.contains("q") == false)
    }

    /// A document list's version vectors may name 1,024 replicas each: what the peer claims of
    /// replicas this copy does not hold is not kept for the link's life.
    @Test func aListsClaimsOfUnknownReplicasAreNotKept() throws {
        let (a, _, peer) = try Self.victim { _ in }
        let notes = try #require(a.documents["notes"])
        var version: [String: JSONValue] = [:]
        for replica in 0..<1_000 { version[String(70_000 + replica)] = 3 }
        peer.send(.documents(["initial": false, "documents": [["uri": "notes", "id": .string(String(notes.id)), "version": .object(version)]]]))
        #expect(peer.toVictim.state == .established, "\(Self.reason(peer))")
        #expect((peer.toVictim.session.peerVersions["notes"]?.count ?? 0) <= notes.text.versionVector.counts.count)
    }

    /// A peer asking this daemon to rebase document after document, each with up to 1,024
    /// epochs, is bounded across documents on the link.
    @Test func epochsToRebaseAreBoundedPerLink() throws {
        let (a, ann, peer) = try Self.victim { $0.maximumStaleEpochsPerLink = 10 }
        for i in 0..<3 { peer.sendOperations([Self.text(1)], uri: "old\(i)", id: 5_000 + UInt64(i)) }
        let entries: [JSONValue] = (0..<3).map { i in
            ["uri": .string("old\(i)"), "id": .string(String(5_000 + i)), "version": [:], "rebase": true,
             "epochs": .array((0..<4).map { .string("7:\(i * 10 + $0)") })]
        }
        peer.send(.documents(["initial": false, "documents": .array(entries)]))
        #expect(Self.reason(peer).contains("more than 10 epochs of documents to rebase named on one link"), "\(Self.reason(peer))")
        HostilePeerTests.stillServes(a, ann)
    }

    /// Each project, and the documents shared by name, has a quota of its own; a document that
    /// takes the place of another under its name replaces its count.
    @Test func usageIsCountedPerScope() {
        let usage = ScopeUsage()
        usage.note(uri: "notes", elements: 10)
        usage.note(uri: "@0123456789abcdef/f1", elements: 7)
        usage.note(uri: "@0123456789abcdef/f2", elements: 5)
        usage.note(uri: "notes", elements: 4)
        #expect(usage.totals(of: .general) == ScopeUsage.Totals(documents: 1, elements: 4))
        #expect(usage.totals(of: .project(key: "0123456789abcdef")) == ScopeUsage.Totals(documents: 2, elements: 12))
        #expect(usage.totals(of: .project(key: "fedcba9876543210")) == ScopeUsage.Totals())
        usage.note(uri: "@0123456789abcdef/f3", elements: .max)
        #expect(usage.totals(of: .project(key: "0123456789abcdef")).elements == .max, "saturates, never traps")
    }

    /// The defaults take what `quire share` shares at most (20,000 files, 256 MiB), with room
    /// for history.
    @Test func theDefaultsFitTheLargestSharedProject() {
        let configuration = Daemon.Configuration()
        #expect(configuration.maximumDocumentsPerScope >= 2 * 20_000)
        #expect(configuration.maximumDocumentsPerList >= configuration.maximumDocumentsPerScope)
        #expect(configuration.maximumDocuments >= configuration.maximumDocumentsPerScope)
        #expect(configuration.maximumElementsPerScope >= 2 * (256 << 20))
    }
}
