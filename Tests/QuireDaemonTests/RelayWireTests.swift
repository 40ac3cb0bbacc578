import QuireDaemon
import QuireRelay
import QuireTestSupport
import Testing

/// The relay's preamble and reply parsers, fed a byte at a time and with junk, and the
/// rendezvous value derived from a secret.
struct RelayWireTests {
    @Test func aPreambleFedAByteAtATimeIsCompleteOnlyAtItsLastByte() {
        let value = (0..<32).map { UInt8($0) }
        let preamble = RelayWire.preamble(rendezvous: value)
        #expect(preamble.count == 14 + 1 + 32)
        for end in 0..<preamble.count {
            #expect(RelayWire.parsePreamble(Array(preamble[..<end])) == .incomplete, "prefix of \(end) bytes")
        }
        #expect(RelayWire.parsePreamble(preamble) == .complete(value, consumed: preamble.count))
        #expect(RelayWire.parsePreamble(preamble + [1, 2, 3]) == .complete(value, consumed: preamble.count), "what follows is not its own")
    }

    @Test func junkIsRefusedAtItsFirstWrongByte() {
        #expect(RelayWire.parsePreamble(Array("G".utf8)) == .invalid("not a Quire relay preamble"))
        #expect(RelayWire.parsePreamble(Array("quire-relay 2\n".utf8)) == .invalid("not a Quire relay preamble"), "another version")
        #expect(RelayWire.parsePreamble(RelayWire.magic + [200]) == .invalid("a rendezvous value of 200 bytes (16 to 64 are allowed)"))
        #expect(RelayWire.parsePreamble(RelayWire.magic + [15]) == .invalid("a rendezvous value of 15 bytes (16 to 64 are allowed)"))
        #expect(RelayWire.parsePreamble(RelayWire.magic + [0]) == .invalid("a rendezvous value of 0 bytes (16 to 64 are allowed)"))
        #expect(RelayWire.maximumPreambleBytes == 79)
    }

    @Test func repliesCarryARoleOrAReason() {
        for status in [RelayWire.Status.accept, .connect, .expired, .full] {
            let reply = RelayWire.reply(status)
            #expect(RelayWire.parseReply(Array(reply.dropLast())) == .incomplete)
            #expect(RelayWire.parseReply(reply + [0, 0, 0, 9]) == .complete(status, consumed: RelayWire.replyBytes))
        }
        #expect(RelayWire.parseReply(RelayWire.magic + [0x7A]) == .invalid("an unknown relay status 122"))
        // A daemon's peer port answers with a frame header, not a relay reply.
        #expect(RelayWire.parseReply([0, 0, 0, 0x90]) == .invalid("not a Quire relay's reply"))
    }

    @Test func theRendezvousValueIsFixedPerSecretAndRevealsNoneOfIt() throws {
        let secret = try PeerSecret.material(from: PeerTestNetwork.secret)
        let other = try PeerSecret.material(from: PeerSecret.generate())
        let value = RelayRendezvous.value(secret: secret)
        #expect(value.count == RelayRendezvous.byteCount)
        #expect(RelayWire.rendezvousLengths.contains(value.count))
        #expect(RelayRendezvous.value(secret: secret) == value, "the same secret meets at the same value")
        #expect(RelayRendezvous.value(secret: other) != value, "another secret does not")
        // No run of 4 bytes of the secret appears in the value.
        for start in 0...(secret.count - 4) {
            let run = Array(secret[start..<(start + 4)])
            #expect(!(0...(value.count - 4)).contains { Array(value[$0..<($0 + 4)]) == run })
        }
    }
}

/// `peer/connect` with `relay: true`, against a transport that records what it was asked.
struct RelayRequestTests {
    @Test func peerConnectWithARelayReachesTheTransportAndBadOnesAreRefused() {
        let daemon = PeerTestNetwork().makeDaemon(1)
        let transport = PeerRequestTests.RecordingTransport()
        daemon.transport = transport
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        #expect(editor.request("peer/connect", ["host": "relay.example", "port": 7080, "relay": true])["result"] == .null)
        #expect(editor.request("peer/connect", ["host": "peer.example", "port": 7070, "relay": false])["result"] == .null)
        let withCommand = editor.request("peer/connect", ["command": "ssh h", "relay": true])
        #expect(withCommand["error"]?["code"] == -32602)
        #expect(withCommand["error"]?["message"]?.stringValue?.contains("params.relay") == true)
        #expect(editor.request("peer/connect", ["port": 7080, "relay": "yes"])["error"]?["code"] == -32602)
        #expect(editor.request("peer/connect", ["relay": true])["error"]?["code"] == -32602, "a relay needs a port")
        #expect(transport.asked == ["relay relay.example:7080", "connect peer.example:7070"])
    }
}
