import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes

/// `PeerChannelHandler` in an `EmbeddedChannel`: a daemon's incoming link fed by a test peer
/// (a bare `SecureChannel` that connects), byte by byte and all at once.
@Suite struct PeerChannelHandlerTests {
    /// A daemon holding "notes", its handler in an embedded channel, and what the link wrote.
    final class Scene {
        let daemon: Daemon
        let channel: EmbeddedChannel
        var written: [UInt8] = []
        var closedByLink = false
        var link: PeerLink?

        init() throws {
            let secret = Array("the embedded peers' shared secret".utf8)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            var next: UInt64 = 900
            daemon = Daemon(configuration: Daemon.Configuration(peerSecret: secret, userName: "embedded"), logger: logger,
                            replicaSource: { next += 1; return ReplicaID(next) })
            let session = daemon.makeSession { _ in }
            _ = session.handleRequest(id: .number(1), method: "initialize", params: ["processId": .null])
            _ = session.handleRequest(id: .number(2), method: "document/open", params: ["uri": "notes", "text": "hello\n"])
            channel = EmbeddedChannel()
            let handler = PeerChannelHandler { [unowned self] _ in
                let link = try? self.daemon.makePeerLink(write: { [unowned self] in self.written += $0 }, close: { [unowned self] in self.closedByLink = true })
                self.link = link
                return link
            }
            try channel.pipeline.syncOperations.addHandler(handler)
        }

        /// The test peer: connects, with the same secret.
        let peer = SecureChannel(secret: Array("the embedded peers' shared secret".utf8), nonce: Array(repeating: 7, count: 32), incoming: false,
                                 handshakeFrameBytes: 4096, peerFrameBytes: 1 << 24,
                                 credentials: { .init(replica: ReplicaID(5), user: "tester", identity: PeerIdentity()) })
        var delivered: [PeerFrame] = []
        var peerEnded: String?

        /// Hands what the link wrote to the test peer; returns what the peer answers.
        func peerReads() -> [UInt8] {
            let bytes = written
            written = []
            var out: [UInt8] = []
            for action in peer.receive(bytes) {
                switch action {
                case .send(let frame): out += peer.frame(frame.body(), seals: peer.sealsOutput)
                case .deliver(let frame): delivered.append(frame)
                case .cut(let reason), .finish(let reason): peerEnded = reason
                case .established: break
                }
            }
            return out
        }

        /// Feeds `bytes` into the channel in pieces of `chunk` bytes, one read each.
        func feed(_ bytes: [UInt8], chunk: Int) throws {
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + chunk)
                try channel.writeInbound(channel.allocator.buffer(bytes: bytes[start..<end]))
                start = end
            }
        }
    }

    @Test(arguments: [1, 1 << 20])
    func aPeerFedByteByByteOrAllAtOnceAuthenticatesAndGetsTheDocumentList(chunk: Int) throws {
        let scene = try Scene()
        try scene.channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7070)).wait()
        let link = try #require(scene.link)
        #expect(link.state == .handshaking && !scene.written.isEmpty, "the link said hello as the channel went active")
        var toLink = scene.peer.frame(scene.peer.start().body(), seals: false)
        for _ in 0..<4 where link.state != .established || !toLink.isEmpty {
            try scene.feed(toLink, chunk: chunk)
            toLink = scene.peerReads()
        }
        #expect(link.state == .established && link.peerUser == "tester" && scene.peerEnded == nil)
        _ = scene.peerReads()
        guard case .documents(let list)? = scene.delivered.first else {
            Issue.record("no document list: \(scene.delivered)")
            return
        }
        #expect(list["documents"]?.arrayValue?.first?["uri"] == "notes")
        // The channel holds nothing the handler left behind.
        #expect(try scene.channel.finish().isClean)
        #expect(link.state == .closed && scene.closedByLink, "the channel going inactive closed the link")
    }

    @Test func garbageBeforeTheHelloCutsTheLinkAndTheChannelFinishesClean() throws {
        let scene = try Scene()
        try scene.channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7070)).wait()
        let link = try #require(scene.link)
        try scene.feed([0, 0, 0, 3, 99, 1, 2], chunk: 1)
        #expect(link.state == .closed && link.closeReason?.hasPrefix("malformed frame") == true, "\(link.closeReason ?? "")")
        #expect(scene.closedByLink)
        #expect(try scene.channel.finish().isClean)
    }
}
