import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// A peer that holds the secret tries to push a document's Lamport clock to the ceiling one frame
/// at a time, each frame within the lead of the clock before it: once the clock reached the
/// ceiling, every honest peer's next edit of the document would be refused and its link cut, for
/// ever. The lead is measured from the elements the copy would hold, not from its clock, so the
/// clock cannot climb past them by more than one lead.
@Suite struct LamportRatchetTests {
    @Test func framesThatEachRunAheadOfTheClockCannotRatchetItUp() throws {
        let (net, a, ann, peer) = try HostilePeerTests.victim()
        let notes = try #require(a.documents["notes"])
        let lead = a.configuration.maximumLamportLead
        peer.sendOperations([HostilePeerTests.insertion(replica: 999, counter: 0, lamport: lead - 1_000, text: "a")])
        #expect(peer.toVictim.state == .established, "one counter within the lead is an ordinary concurrent edit")
        let clock = notes.text.scalars.lamportClock
        #expect(clock == lead - 1_000)
        // Within the lead of the clock as it now is, but far past the elements the copy holds.
        peer.sendOperations([HostilePeerTests.insertion(replica: 999, counter: 1, lamport: clock + lead - 1_000, text: "b")])
        let reason = peer.toVictim.closeReason ?? "(still open)"
        #expect(reason.contains("Lamport counter \(clock + lead - 1_000) is beyond what this daemon accepts"), "\(reason)")
        #expect(notes.text.scalars.lamportClock == clock, "the clock did not move")
        #expect(notes.text.versionVector[ReplicaID(999)] == 1)
        // An honest peer linked to the victim still edits the document.
        let honest = net.makeDaemon(300)
        let wire = try net.link(a, honest)
        net.pump([a, honest])
        let bob = TestEditor(daemon: honest)
        bob.initialize(user: "bob")
        _ = bob.open("notes", text: try #require(honest.documents["notes"]).text.string)
        let reply = bob.edit(0..<0, with: "B")
        #expect(reply["result"]?["editorRevision"] != nil, "\(reply)")
        net.pump([a, honest])
        #expect(wire.a?.state == .established && wire.b?.state == .established)
        #expect(notes.text.string.contains("B"), "the honest edit arrived: \(notes.text.string)")
        #expect(notes.text.string == honest.documents["notes"]?.text.string)
        ann.deliverInbox()
    }

    /// An honest copy whose history was mostly dropped (a long-lived document: typed and removed
    /// many times over, its tombstones dropped) has a clock far past the characters it stores; a
    /// peer that gets it whole and then its next edits takes them, as the lead counts every
    /// character the counters name (dropped ones too), not those stored. The lead is set small
    /// here so that counting only the stored ones would refuse the edit.
    @Test func aCopyWhoseHistoryWasDroppedStillSendsItsEdits() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100) { $0.maximumLamportLead = 10 }
        let b = net.makeDaemon(200) { $0.maximumLamportLead = 10 }
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: "start")
        for _ in 0..<50 {
            ann.edit(0..<0, with: String(repeating: "h", count: 100))
            ann.edit(0..<100, with: "")
        }
        let notes = try #require(a.documents["notes"])
        #expect(notes.dropTombstones(keeping: []) == 5_000)
        #expect(notes.text.scalars.lamportClock >= 5_000 && notes.text.string == "start")
        let wire = try net.link(a, b)
        net.pump([a, b])
        #expect(b.documents["notes"]?.text.string == "start")
        let reply = ann.edit(5..<5, with: "!")
        #expect(reply["result"]?["editorRevision"] != nil, "\(reply)")
        net.pump([a, b])
        #expect(wire.a?.state == .established && wire.b?.state == .established, "\(wire.b?.closeReason ?? "")")
        #expect(b.documents["notes"]?.text.string == "start!")
    }
}
