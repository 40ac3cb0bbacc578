import JSON
import Logging
import QuireProtocol

/// One editor's byte stream, independent of how the bytes travel: framing in, JSON-RPC
/// processing, replies and notifications framed out in the mode the editor spoke.
///
/// Guarantees: each frame is handled completely (its reply sent) before the next, and the daemon
/// edits a read caused are flushed when the read is done; a framing error is logged and answered
/// with a -32700 carrying id null (it may have eaten a request), and the stream carries on.
public final class EditorConnection {
    public let session: EditorSession
    private let daemon: Daemon
    private var framer: MessageFramer
    private var writer = FrameWriter()
    private let processor: MessageProcessor
    private let write: ([UInt8]) -> Void
    private let serializer = JSONSerializer(sortedKeys: true)

    /// - Parameter write: sends framed bytes to the editor.
    public init(daemon: Daemon, write: @escaping ([UInt8]) -> Void) {
        self.daemon = daemon
        self.write = daemon.gated(write)
        framer = MessageFramer(maximumFrameBytes: daemon.configuration.maximumFrameBytes)
        processor = MessageProcessor(parser: JSONParser(maximumDepth: daemon.configuration.maximumNestingDepth))
        var send: ((Message) -> Void)?
        session = daemon.makeSession { message in send?(message) }
        // Weak: a session may outlive its connection (a transport that drops it without closing
        // the session); what the daemon sends it then goes nowhere instead of crashing.
        send = { [weak self] message in self?.send(message.json) }
    }

    /// Bytes read from the editor. Every message in them is answered in order; then the daemon
    /// edits they caused are sent, so a burst of keystrokes read at once reaches other editors
    /// as one edit each.
    public func receive(_ bytes: some Collection<UInt8>) {
        receive(bytes, endingRead: true)
    }

    /// Bytes were received in a read not ended yet (`receive(_:endingRead: false)`).
    private var readInProgress = false

    /// Bytes read from the editor, the read going on (`endingRead` false) when the transport has
    /// more already read for it: `endRead()` then ends it, so a burst read at once (NIO's reads
    /// before `channelReadComplete`) shares one commit under `--durability sync`.
    func receive(_ bytes: some Collection<UInt8>, endingRead: Bool) {
        for event in framer.feed(bytes) {
            writer.lineDelimited = framer.mode == .lineDelimited
            switch event {
            case .message(let body):
                // A reopen may wait for the peers' catch-up; it is handled later (`ReopenWaits`).
                if daemon.holdsForCatchUp(body, from: self) { continue }
                process(body)
            case .error(let error):
                daemon.logger.warning("session \(session.id): \(error.description)")
                send(Message.errorResponse(id: nil, .parseError(error.description)).json)
            }
        }
        if endingRead { endRead() } else { readInProgress = true }
    }

    /// The end of a read `receive(_:endingRead: false)` began: what it logged is made durable
    /// and the output it held goes out.
    func endRead() {
        readInProgress = false
        daemon.endRead()
    }

    /// Handles one message and sends its reply (the daemon flushes after the read).
    func process(_ body: [UInt8]) {
        if let reply = processor.process(body, with: session) { send(reply) }
    }

    /// The editor closed its end of the stream. A read the transport had not ended is ended
    /// first, so its replies go out and its edits are durable before the session ends.
    public func endOfInput() {
        if readInProgress { endRead() }
        if let error = framer.finish() { daemon.logger.warning("session \(session.id): \(error.description)") }
        daemon.endSession(session)
    }

    private func send(_ value: JSONValue) {
        write(writer.frame(serializer.serialize(value)))
    }
}

/// A reopen may hold this connection's messages until the peers caught up (`ReopenWaits`).
extension EditorConnection: HeldMessageSource {
    var sessionID: Int { session.id }
}
