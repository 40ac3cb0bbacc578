import EditingTraces
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// Live links repair themselves: digests of what each daemon holds are compared now and then, and
/// what differs is exchanged, without a reconnect.
@Suite struct PeerRepairTests {
    static func text(_ daemon: Daemon, _ uri: String = "notes") -> String? { daemon.documents[uri]?.text.string }

    /// Ticks every daemon once (a digest round starts) and carries the frames until nothing moves.
    static func digestRound(_ net: PeerTestNetwork, _ daemons: [Daemon], at now: Double) {
        for daemon in daemons { daemon.tickPeers(now: now, interval: 5) }
        net.pump(daemons)
    }

    @Test func anOperationDeliveredToOneSideIsRepairedWithinOneDigestRound() throws {
        let (net, a, b, ann, wire) = try PeerSyncTests.linkedWithNotes(100)
        defer { _ = ann }
        guard let document = a.documents["notes"] else { Issue.record("no document"); return }
        // An insertion only a holds, as if it had been lost on the way to b.
        var side = document.text
        side.replica = ReplicaID(4242)
        document.apply(side.replace(1..<1, with: Array("<A17>".unicodeScalars)))
        net.pump([a, b])
        #expect(Self.text(a) == "a<A17>bc" && Self.text(b) == "abc", "nothing relays it")
        Self.digestRound(net, [a, b], at: 1)
        #expect(Self.text(b) == "a<A17>bc")
        #expect(wire.a?.state == .established && wire.b?.state == .established && a.links.count == 1, "repaired on the live link")
        // The next round confirms, and sends nothing more of the document.
        let before = (wire.a?.operationsOut ?? 0) + (wire.b?.operationsOut ?? 0)
        Self.digestRound(net, [a, b], at: 6)
        Self.digestRound(net, [a, b], at: 11)
        #expect((wire.a?.operationsOut ?? 0) + (wire.b?.operationsOut ?? 0) == before)
    }

    @Test func aRemovalDroppedOnOneSideIsRepairedWithinOneDigestRound() throws {
        let (net, a, b, ann, wire) = try PeerSyncTests.linkedWithNotes(200)
        guard let document = b.documents["notes"] else { Issue.record("no document"); return }
        // a lost the removal of "b": b removed it, a never did.
        var side = document.text
        side.replica = ReplicaID(4343)
        document.apply(side.replace(1..<2, with: []))
        net.pump([a, b])
        #expect(Self.text(a) == "abc" && Self.text(b) == "ac")
        #expect(a.documents["notes"]?.text.versionVector == document.text.versionVector, "only a removal differs")
        Self.digestRound(net, [a, b], at: 1)
        #expect(Self.text(a) == "ac")
        ann.deliverInbox()
        #expect(ann.string == "ac" && wire.a?.state == .established && wire.b?.state == .established)
    }

    @Test func aDivergenceHalfWayAlongAChainIsRepairedOnBothLinks() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200), c = net.makeDaemon(300)
        let ann = TestEditor(daemon: a)
        ann.initialize()
        ann.open("notes", text: "f(x) = y\n")
        try net.link(a, b)
        try net.link(b, c)
        net.pump([a, b, c])
        guard let middle = b.documents["notes"] else { Issue.record("no document"); return }
        var side = middle.text
        side.replica = ReplicaID(4444)
        middle.apply(side.replace(0..<0, with: Array("<B2>".unicodeScalars)))
        Self.digestRound(net, [a, b, c], at: 1)
        #expect(Self.text(a) == "<B2>f(x) = y\n" && Self.text(c) == Self.text(a))
    }

    /// Ann and Cat, at the ends of a chain, type punctuation-heavy tokens and delete while the
    /// daemon in the middle loses operations (insertions and removals that reach its copy only, as
    /// if dropped on the way); one digest round once the network is quiet brings every copy and
    /// both editors together, and the round after it finds nothing left to send.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func operationsLostInTheMiddleOfAChainAreRepairedByOneRound(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200), c = net.makeDaemon(300)
        let ann = TestEditor(daemon: a), cat = TestEditor(daemon: c)
        ann.initialize()
        ann.open("notes", text: "f(x) = <A1>;\n")
        let wires = [try net.link(a, b), try net.link(b, c)]
        net.pump([a, b, c])
        cat.initialize()
        cat.open("notes", text: "f(x) = <A1>;\n")
        let tokens = ["<A17>", "f(x)", "\"s\"", "[i]", "{}", ";\n", "->"]
        var lost = 0
        for step in 0..<200 {
            let editor = Bool.random(using: &random) ? ann : cat
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let at = Int.random(in: 0...editor.text.count, using: &random)
                editor.edit(at..<at, with: tokens.randomElement(using: &random) ?? "x")
            case 4..<6 where editor.text.count > 2:
                let start = Int.random(in: 0..<(editor.text.count - 1), using: &random)
                editor.edit(start..<min(start + Int.random(in: 1...4, using: &random), editor.text.count), with: "")
            case 6:
                guard let middle = b.documents["notes"], middle.text.count > 2 else { break }
                var side = middle.text
                side.replica = ReplicaID(9_000 + UInt64(step))
                let at = Int.random(in: 0..<(middle.text.count - 1), using: &random)
                middle.apply(Bool.random(using: &random) ? side.replace(at..<at, with: Array("<L\(step)>".unicodeScalars))
                                                          : side.replace(at..<(at + 2), with: []))
                lost += 1
            case 7:
                net.pump([a, b, c], limit: Int.random(in: 1...3, using: &random))
            default:
                ann.deliverInbox()
                cat.deliverInbox()
            }
        }
        net.pump([a, b, c])
        ann.deliverInbox()
        cat.deliverInbox()
        Self.digestRound(net, [a, b, c], at: 1)
        ann.deliverInbox()
        cat.deliverInbox()
        #expect(lost > 0)
        #expect(Self.text(a) == Self.text(b) && Self.text(b) == Self.text(c), "seed \(seed): \(lost) operations lost")
        #expect(ann.string == Self.text(a) && cat.string == Self.text(c), "seed \(seed)")
        let sent = wires.map { ($0.a?.operationsOut ?? 0) + ($0.b?.operationsOut ?? 0) }
        Self.digestRound(net, [a, b, c], at: 6)
        #expect(wires.map { ($0.a?.operationsOut ?? 0) + ($0.b?.operationsOut ?? 0) } == sent, "seed \(seed): the confirming round sent more")
        #expect(wires.allSatisfy { $0.a?.state == .established && $0.b?.state == .established })
        b.documents["notes"]?.text.scalars._checkInvariants()
    }

    @Test func digestsOfEqualCopiesMatchAndOfCopiesDifferingInARemovalDiffer() {
        var typed = ReplicatingText(replica: ReplicaID(1))
        var operations = typed.replace(0..<0, with: Array("<A17> f(x)\n".unicodeScalars))
        operations += typed.replace(0..<5, with: [])
        operations += typed.replace(1..<1, with: Array("\"s\"".unicodeScalars))
        // The same history applied elsewhere, in another storage layout.
        var replayed = ReplicatingText(replica: ReplicaID(2))
        for op in operations { replayed.integrate(op) }
        #expect(DocumentDigest(of: typed) == DocumentDigest(of: replayed))
        // Dropped tombstones do not change what a copy holds.
        var compacted = replayed
        let dropped = compacted.dropTombstones()
        #expect(dropped > 0)
        #expect(DocumentDigest(of: compacted) == DocumentDigest(of: typed))
        // One removal more, same version vector: another digest.
        var removed = replayed
        removed.replica = ReplicaID(3)
        _ = removed.replace(0..<1, with: [])
        #expect(removed.versionVector == typed.versionVector)
        #expect(DocumentDigest(of: removed) != DocumentDigest(of: typed))
        // One insertion more: another digest.
        var inserted = replayed
        inserted.replica = ReplicaID(3)
        _ = inserted.replace(0..<0, with: ["x"])
        #expect(DocumentDigest(of: inserted) != DocumentDigest(of: typed))
        #expect(DocumentDigest(hex: DocumentDigest(of: typed).hex) == DocumentDigest(of: typed))
    }

    @Test func aFloodOfDigestAsksIsAnsweredWithinItsBudget() throws {
        let (net, a, b, ann, wire) = try PeerSyncTests.linkedWithNotes(500)
        defer { _ = (ann, b) }
        guard let document = a.documents["notes"], let aSide = wire.a, let bSide = wire.b else { Issue.record("no link"); return }
        let ask = DigestMessage(phase: .ask, uri: "notes", documentID: document.id, digest: DocumentDigest(bytes: Array(repeating: 7, count: 16)),
                                received: aSide.digests.framesSent)
        let bytesBefore = aSide.bytesOut
        for _ in 0..<1_000 { bSide.send(.digest(ask.json)) }
        net.pump([a])
        #expect(aSide.state == .established)
        #expect(aSide.digests.droppedThisTick == 1_000 - DigestExchange.maximumAsksPerDocumentPerTick)
        // Two answers, each with a version vector; nothing of the document until a want it expects.
        #expect(aSide.bytesOut - bytesBefore < 1_000, "\(aSide.bytesOut - bytesBefore) bytes")
        let operationsBefore = aSide.operationsOut
        let want = DigestMessage(phase: .want, uri: "notes", documentID: document.id, version: VersionVector())
        for _ in 0..<10 { bSide.send(.digest(want.json)) }
        net.pump([a])
        #expect(aSide.operationsOut - operationsBefore == document.text.operations().count, "one want answered, once")
        // An unasked answer changes nothing; a malformed digest cuts the link.
        bSide.send(.digest(DigestMessage(phase: .answer, uri: "notes", documentID: document.id, digest: document.digest, received: 0,
                                         version: VersionVector()).json))
        net.pump([a])
        #expect(aSide.state == .established)
        bSide.send(.digest(["phase": "ask", "uri": "notes", "id": .string(String(document.id)), "digest": "not hex", "received": "0"]))
        net.pump([a])
        #expect(aSide.state == .closed && aSide.closeReason?.contains("malformed digest") == true)
    }

    @Test func digestMessagesKeepTheirBounds() throws {
        let version = VersionVector([ReplicaID(9): 3])
        let message = DigestMessage(phase: .answer, uri: "f(x)", documentID: 42, digest: DocumentDigest(bytes: Array(0..<16)), received: 5, version: version)
        #expect(try DigestMessage(json: message.json) == message)
        let bad: [JSONValue] = [
            ["phase": "ask", "uri": "", "id": "1", "digest": .string(String(repeating: "0", count: 32)), "received": "0"],
            ["phase": "ask", "uri": "n", "id": "-1", "digest": .string(String(repeating: "0", count: 32)), "received": "0"],
            ["phase": "ask", "uri": "n", "id": "1", "digest": .string(String(repeating: "0", count: 30)), "received": "0"],
            ["phase": "ask", "uri": "n", "id": "1", "digest": .string(String(repeating: "0", count: 32)), "received": "0", "version": [:]],
            ["phase": "want", "uri": "n", "id": "1"],
            ["phase": "want", "uri": "n", "id": "1", "version": ["0": 1]],
            ["phase": "want", "uri": "n", "id": "1", "version": ["5": -1]],
            ["phase": "tell", "uri": "n", "id": "1"],
            ["phase": "ask", "uri": .string(String(repeating: "u", count: 4097)), "id": "1",
             "digest": .string(String(repeating: "0", count: 32)), "received": "0"],
        ]
        for json in bad { #expect(throws: DigestMessage.Invalid.self) { try DigestMessage(json: json) } }
    }

    @Test func roundsThatKeepDifferingBackOff() {
        var exchange = DigestExchange()
        var asked: [UInt64] = []
        for _ in 0..<40 {
            exchange.startTick()
            if exchange.shouldAsk(uri: "notes", revision: 1) {
                asked.append(exchange.tick)
                let taken = exchange.takeAnswer(uri: "notes")
                #expect(taken)
                exchange.differed(uri: "notes", repaired: true)
            }
        }
        #expect(asked == [1, 2, 4, 8, 16, 32], "\(asked)")
        let unasked = exchange.takeAnswer(uri: "notes"), unexpected = exchange.takeWant(uri: "notes")
        #expect(!unasked, "no answer without an ask")
        #expect(!unexpected)
    }
}
