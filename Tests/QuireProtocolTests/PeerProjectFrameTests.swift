import QuireProtocol
import Testing

/// Peer frame kind 12, `project` (protocol/peer.md): a varint length, the project's key, then the
/// tree operations as opaque bytes; decoded with bounds.
@Suite struct PeerProjectFrameTests {
    @Test func aProjectFrameRoundTrips() throws {
        let frame = PeerFrame.project(key: "3fa29c1b00d4e6f1", payload: [0, 1, 2, 255])
        let body = frame.body()
        #expect(body.first == 12 && body[1] == 16, "kind 12, then the key's length")
        #expect(Array(body[2..<18]) == Array("3fa29c1b00d4e6f1".utf8))
        #expect(try PeerFrame.decode(body) == frame)
        #expect(try PeerFrame.decode([12, 16] + Array("3fa29c1b00d4e6f1".utf8)) == .project(key: "3fa29c1b00d4e6f1", payload: []))
    }

    @Test func aMalformedProjectFrameIsRefused() {
        let cases: [(body: [UInt8], reason: String)] = [
            ([12], "project frame with a malformed project key"),                                  // no length
            ([12, 16] + Array("3fa29c".utf8), "project frame with a malformed project key"),       // shorter than it says
            ([12, 0x80], "project frame with a malformed project key"),                            // an unfinished varint
            ([12, 65] + Array(repeating: 0x61, count: 65), "project frame with a malformed project key"),   // over 64 bytes
            ([12, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F] + Array(repeating: 0x61, count: 8), "project frame with a malformed project key"),
            ([12, 3, 0x61, 0x1B, 0x62], "project frame whose key is not printable ASCII"),
            ([12, 2, 0xC3, 0xA9], "project frame whose key is not printable ASCII"),
        ]
        for (body, reason) in cases {
            do {
                let frame = try PeerFrame.decode(body)
                Issue.record("\(body) decoded as \(frame)")
            } catch {
                #expect(error.description == reason, "\(body)")
            }
        }
    }
}
