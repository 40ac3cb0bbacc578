import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// A scope's quota counts what its documents store, so a long-lived project whose editors type
/// and remove a lot does not creep up to it: the removed characters a stability round (or a
/// snapshot of a document never shared) drops leave the count, and an honest peer's next edit
/// is taken again.
@Suite struct ScopeUsageDriftTests {
    @Test func droppedTombstonesLeaveTheScopesCount() throws {
        let held = PeerSecurityTests.privateText.unicodeScalars.count
        let (a, ann, peer) = try PeerQuotaTests.victim { $0.maximumElementsPerScope = held + 1_000 }
        let notes = try #require(a.documents["notes"])
        // Heavy editing by the user here (never refused): 3,000 characters typed and removed.
        for _ in 0..<30 {
            ann.edit(0..<0, with: String(repeating: "h", count: 100))
            ann.edit(0..<100, with: "")
        }
        #expect(notes.text.string == PeerSecurityTests.privateText)
        #expect(a.registry.usage.totals(of: .general).elements == UInt64(held + 3_000), "removed characters count while they are stored")
        // What a stability round does once every holder has seen them removed.
        let dropped = notes.dropTombstones(keeping: [])
        #expect(dropped >= 3_000)
        #expect(a.registry.usage.totals(of: .general).elements == UInt64(notes.text.string.unicodeScalars.count + notes.text.scalars.tombstoneCount))
        #expect(a.registry.usage.totals(of: .general).elements == notes.text.scalars.claimedElementCount - UInt64(notes.text.scalars.compactedCount))
        // An honest peer's edit fits again (before, the count never went down and it was cut).
        peer.sendOperations([PeerQuotaTests.text(300)], uri: "more", id: 9_000)
        #expect(peer.toVictim.state == .established, "\(PeerQuotaTests.reason(peer))")
        #expect(a.documents["more"]?.text.string.count == 300)
        #expect(a.registry.usage.totals(of: .general) == ScopeUsage.Totals(documents: 2, elements: UInt64(held + 300)))
        // And the quota still holds: more than fits is refused.
        peer.sendOperations([PeerQuotaTests.text(800, replica: 998)], uri: "more", id: 9_000)
        #expect(PeerQuotaTests.reason(peer).contains("the quota of general is \(held + 1_000) characters"), "\(PeerQuotaTests.reason(peer))")
    }

    /// The peer's operations on a document that dropped tombstones are checked against what it
    /// stores, not against its counters (which still name every dropped character).
    @Test func aCompactedDocumentTakesAPeersEditsWithinTheQuota() throws {
        let held = PeerSecurityTests.privateText.unicodeScalars.count
        let (a, ann, peer) = try PeerQuotaTests.victim { $0.maximumElementsPerScope = held + 600 }
        let notes = try #require(a.documents["notes"])
        for _ in 0..<20 {
            ann.edit(0..<0, with: String(repeating: "k", count: 100))
            ann.edit(0..<100, with: "")
        }
        _ = notes.dropTombstones(keeping: [])
        #expect(notes.text.scalars.claimedElementCount == UInt64(held + 2_000), "its counters still name every character typed")
        let insertion = HostilePeerTests.insertion(replica: 999, lamport: notes.text.scalars.lamportClock + 1,
                                                   text: String(repeating: "p", count: 500))
        peer.sendOperations([insertion], uri: "notes", id: notes.id)
        #expect(peer.toVictim.state == .established, "\(PeerQuotaTests.reason(peer))")
        #expect(notes.text.string.filter { $0 == "p" }.count == 500 + PeerSecurityTests.privateText.filter { $0 == "p" }.count)
        #expect(a.registry.usage.totals(of: .general).elements == UInt64(held + 500))
    }
}
