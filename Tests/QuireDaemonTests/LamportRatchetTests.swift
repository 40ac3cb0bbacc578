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
}
