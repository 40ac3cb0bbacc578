import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A peer flooding stability asks across many documents: each round holds a copy of its
/// document's removed IDs, so rounds are bounded per document (8) and across documents too.
@Suite struct StabilityRoundBoundTests {
    @Test func roundsAcrossDocumentsAreBounded() throws {
        let a = TombstoneCompactionTests.makeDaemon(2700), b = TombstoneCompactionTests.makeDaemon(2800), c = TombstoneCompactionTests.makeDaemon(2900)
        let network = PeerTestNetwork()
        let (ann, bob) = try TombstoneCompactionTests.pairedEditors(a, b, network)
        defer { _ = (ann, bob) }
        let other = TestEditor(daemon: a)
        other.initialize(user: "cy")
        for name in ["d1", "d2"] { _ = other.open(name, text: "text of \(name)\n") }
        try network.link(b, c)        // rounds that reach B wait for C's answer: they stay under way
        network.pump([a, b, c])
        b.stabilityRounds.maximumActive = 10
        let fromA = try #require(network.wires.first?.b)
        var sent = 0
        for name in ["doc", "d1", "d2"] {
            let document = try #require(b.document(name))
            for n in 0..<8 {
                b.receiveStability(["uri": .string(name), "id": .string(String(document.id)), "round": .string("9:\(sent + n)"), "phase": "ask"], from: fromA)
            }
            sent += 8
        }
        #expect(b.stabilityRounds.active.count == 10, "\(b.stabilityRounds.active.count) rounds under way")
        #expect(fromA.state == .established, "the asks past the bound are answered with a failure, the link stays")
    }
}
