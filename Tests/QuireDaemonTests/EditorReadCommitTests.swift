import Foundation
import JSON
import Logging
import NIOCore
import NIOEmbedded
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes
import Testing
@testable import QuireDaemon

/// An editor channel's reads end at NIO's `channelReadComplete`, not at each `channelRead`: with
/// `--durability sync`, the replies of every read NIO delivered together wait for one commit, and
/// a read NIO had not ended is ended before the end of input is handled.
@Suite struct EditorReadCommitTests {
    static func frame(_ value: JSONValue) -> [UInt8] {
        var writer = FrameWriter()
        return writer.frame(JSONSerializer(sortedKeys: true).serialize(value))
    }

    static func open(_ id: Int64, _ uri: String) -> [UInt8] {
        frame(["jsonrpc": "2.0", "id": .integer(id), "method": "document/open", "params": ["uri": .string(uri), "text": .string("text of \(uri)\n")]])
    }

    final class Harness {
        let channel = EmbeddedChannel()
        let daemon: Daemon
        let path = DaemonProcess.temporaryDirectory("read-commit")

        init() throws {
            var next: UInt64 = 0
            daemon = Daemon(logger: Logger(label: "test"), replicaSource: { next += 1; return ReplicaID(next) },
                            store: try DocumentStore(path: path, durability: .sync, logger: Logger(label: "test")))
            let daemon = self.daemon
            try channel.pipeline.syncOperations.addHandler(EditorChannelHandler(
                makeConnection: { write in EditorConnection(daemon: daemon, write: write) }, onClose: { _ in }))
        }

        /// NIO's `channelRead` alone, as when it has more to read before `channelReadComplete`.
        func read(_ bytes: [UInt8]) {
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            channel.pipeline.fireChannelRead(NIOAny(buffer))
        }

        /// The ids of the replies written so far.
        func replyIDs() throws -> [Int64] {
            var framer = MessageFramer()
            var ids: [Int64] = []
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                for case .message(let body) in framer.feed(buffer.readBytes(length: buffer.readableBytes) ?? []) {
                    if let id = try JSONParser().parse(body)["id"]?.integerValue { ids.append(id) }
                }
            }
            return ids
        }
    }

    @Test func repliesOfReadsDeliveredTogetherWaitForTheirReadComplete() throws {
        let harness = try Harness()
        harness.read(Self.frame(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [:]]))
        harness.channel.pipeline.fireChannelReadComplete()
        #expect(try harness.replyIDs() == [1])
        harness.read(Self.open(2, "a.txt"))
        harness.read(Self.open(3, "b.txt"))
        #expect(try harness.replyIDs().isEmpty, "an open's reply went out before its creation was durable")
        harness.channel.pipeline.fireChannelReadComplete()
        #expect(try harness.replyIDs() == [2, 3])
        #expect(harness.daemon.documentCount == 2)
    }

    @Test func aReadNotYetEndedIsEndedAtTheEndOfInput() throws {
        let harness = try Harness()
        harness.read(Self.frame(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [:]]) + Self.open(2, "a.txt"))
        harness.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try harness.replyIDs() == [1, 2])
    }
}
