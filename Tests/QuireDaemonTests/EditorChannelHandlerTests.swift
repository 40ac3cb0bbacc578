import JSON
import NIOCore
import NIOEmbedded
import QuireProtocol
import ReplicatingTypes
import Testing
@testable import QuireDaemon

/// `EditorChannelHandler` on an `EmbeddedChannel`, no process and no socket: bytes in however
/// they are cut (one at a time or all in one read) give the same replies in order; end of input
/// and a close each end the session once and leave the channel clean.
@Suite struct EditorChannelHandlerTests {
    /// A session's worth of requests, LSP-framed: ids 1 to 5, the last a `shutdown`.
    static let input: [UInt8] = {
        let messages: [JSONValue] = [
            ["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["user": ["name": "ann"]]],
            ["jsonrpc": "2.0", "method": "initialized", "params": [:]],
            ["jsonrpc": "2.0", "id": 2, "method": "document/open", "params": ["uri": "notes", "text": "héllo\n"]],
            ["jsonrpc": "2.0", "id": 3, "method": "document/edit", "params": [
                "uri": "notes", "epoch": 0, "revision": 0,
                "changes": [["range": ["start": ["line": 1, "character": 0], "end": ["line": 1, "character": 0]], "text": "wörld\n"]],
            ]],
            ["jsonrpc": "2.0", "id": 4, "method": "document/text", "params": ["uri": "notes"]],
            ["jsonrpc": "2.0", "id": 5, "method": "shutdown"],
        ]
        var writer = FrameWriter()
        let serializer = JSONSerializer(sortedKeys: true)
        return messages.flatMap { writer.frame(serializer.serialize($0)) }
    }()

    /// A channel with a handler over a fresh daemon, and the connections it closed.
    final class Harness {
        let daemon: Daemon
        let channel: EmbeddedChannel
        var closed: [EditorConnection] = []

        init() throws {
            var next: UInt64 = 0
            daemon = Daemon(replicaSource: { next += 1; return ReplicaID(next) })
            channel = EmbeddedChannel()
            let daemon = self.daemon
            let handler = EditorChannelHandler(makeConnection: { write in EditorConnection(daemon: daemon, write: write) },
                                               onClose: { [unowned self] connection in self.closed.append(connection) })
            try channel.pipeline.syncOperations.addHandler(handler)
        }

        func feed(_ bytes: some Collection<UInt8>) throws {
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            try channel.writeInbound(buffer)
        }

        /// Every frame written so far, decoded; checks each is well framed.
        func written() throws -> [JSONValue] {
            var framer = MessageFramer()
            var messages: [JSONValue] = []
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                for event in framer.feed(buffer.readBytes(length: buffer.readableBytes) ?? []) {
                    guard case .message(let body) = event else {
                        Issue.record("the handler wrote a bad frame: \(event)")
                        continue
                    }
                    messages.append(try JSONParser().parse(body))
                }
            }
            #expect(framer.finish() == nil, "no frame cut off")
            return messages
        }
    }

    /// The replies among `messages`, by id, in the order written.
    static func replies(_ messages: [JSONValue]) -> [JSONValue] { messages.filter { $0["id"] != nil } }

    static func checkReplies(_ replies: [JSONValue]) {
        #expect(replies.map { $0["id"] } == [1, 2, 3, 4, 5], "one reply per request, in order: \(replies)")
        #expect(replies.allSatisfy { $0["error"] == nil }, "\(replies)")
        #expect(replies.first?["result"]?["capabilities"]?["positionEncoding"] == "utf-16")
        #expect(replies.dropFirst().first?["result"]?["created"] == true)
        #expect(replies.dropFirst(2).first?["result"] == ["editorRevision": 1])
        #expect(replies.dropFirst(3).first?["result"]?["text"] == "héllo\nwörld\n")
        #expect(replies.last?["result"] == .null)
    }

    @Test func bytesFedOneAtATimeGetEveryReplyInOrder() throws {
        let harness = try Harness()
        for byte in Self.input { try harness.feed([byte]) }
        Self.checkReplies(Self.replies(try harness.written()))
        #expect(harness.daemon.documents["notes"]?.text.string == "héllo\nwörld\n")
        #expect(try harness.channel.finish().isClean)
        #expect(harness.closed.count == 1, "closing the channel ends the session once")
        #expect(harness.daemon.sessions.isEmpty)
    }

    @Test func bytesFedInOneReadGetTheSameReplies() throws {
        let drip = try Harness(), mass = try Harness()
        for byte in Self.input { try drip.feed([byte]) }
        try mass.feed(Self.input)
        let dripped = Self.replies(try drip.written()), massed = Self.replies(try mass.written())
        Self.checkReplies(massed)
        // The same but for the view's random name.
        let withoutViews = { (replies: [JSONValue]) in replies.map { reply -> JSONValue in
            guard case .object(var members) = reply, case .object(var result)? = members["result"] else { return reply }
            result["view"] = nil
            members["result"] = .object(result)
            return .object(members)
        } }
        #expect(withoutViews(dripped) == withoutViews(massed))
        #expect(try drip.channel.finish().isClean && mass.channel.finish().isClean)
    }

    @Test func endOfInputFlushesTheRepliesThenClosesOnce() throws {
        let harness = try Harness()
        try harness.feed(Self.input)
        harness.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        (harness.channel.eventLoop as! EmbeddedEventLoop).run()
        Self.checkReplies(Self.replies(try harness.written()))
        #expect(harness.closed.count == 1)
        #expect(!harness.channel.isActive, "the channel closes once the replies are out")
        #expect(harness.daemon.sessions.isEmpty)
        #expect(try harness.channel.finish(acceptAlreadyClosed: true).isClean)
        #expect(harness.closed.count == 1, "the close after end of input ends nothing twice")
    }

    @Test func aFrameCutByTheCloseIsNotAnswered() throws {
        let harness = try Harness()
        try harness.feed(Self.input.prefix(Self.input.count - 10))
        let replies = Self.replies(try harness.written())
        #expect(replies.map { $0["id"] } == [1, 2, 3, 4], "the cut shutdown is not answered")
        #expect(try harness.channel.finish().isClean)
        #expect(harness.closed.count == 1)
        #expect(harness.daemon.sessions.isEmpty)
    }
}
