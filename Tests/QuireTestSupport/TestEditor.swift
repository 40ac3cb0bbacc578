import Crypto
import Foundation
import JSON
import Logging
import QuireDaemon
import QuireProtocol
import ReplicatingTypes

/// A scripted editor attached to an in-process daemon through the real framing and JSON-RPC
/// code, holding its own plain text and applying daemon edits by the protocol's rules.
public final class TestEditor {
    public private(set) var connection: EditorConnection!
    /// Set when this editor talks to a real `quire` process instead of an in-process daemon.
    public private(set) var process: DaemonProcess?
    private var framer = MessageFramer()
    private let parser = JSONParser()
    /// Everything the daemon sent, in order, not yet taken.
    public var inbox: [JSONValue] = []
    /// Daemon messages held back to simulate latency, delivered by `deliver`.
    public var held: [JSONValue] = []
    public var holdIncoming = false
    private var nextID: Int64 = 1

    // The editor's document, by the protocol's rules.
    public var uri = ""
    public var text: [Unicode.Scalar] = []
    public var encoding = PositionEncoding.utf16
    public var epoch = 0
    public var editorRevision = 0
    public var daemonRevision = 0
    public var dropped = 0
    public var hashMismatches = 0
    /// The daemon's name for this editor's view, from `document/open`, sent back on a reopen.
    public var view: String?

    public init(daemon: Daemon) {
        connect(to: daemon)
    }

    /// Attaches this editor to `daemon` (another one after `disconnect()`: its daemon died),
    /// keeping its text, epoch, revisions and view, as a client does.
    public func connect(to daemon: Daemon) {
        framer = MessageFramer()
        inbox = []
        held = []
        connection = EditorConnection(daemon: daemon) { [unowned self] bytes in
            for event in self.framer.feed(bytes) {
                guard case .message(let body) = event, let value = try? self.parser.parse(body) else { continue }
                self.inbox.append(value)
            }
        }
    }

    /// Lets go of the daemon as a `kill -9` would: nothing is closed, nothing more is read.
    public func disconnect() {
        connection = nil
    }

    /// An editor speaking to a real daemon process through its pipes.
    public init(process: DaemonProcess) {
        self.process = process
    }

    /// Attaches this editor to another real `quire` process (its daemon was restarted), keeping
    /// its text, epoch, revisions and view, as a client does; what the old process sent and the
    /// editor had not read yet is gone with it.
    public func connect(to process: DaemonProcess) {
        self.process = process
        framer = MessageFramer()
        inbox = []
        held = []
    }

    public func sendRaw(_ bytes: [UInt8]) {
        if let process { process.send(bytes: bytes) } else { connection.receive(bytes) }
    }

    /// Moves what a real daemon has sent so far into the inbox.
    public func collect() {
        if let process { inbox.append(contentsOf: process.drain()) }
    }

    public func sendRaw(_ text: String) { sendRaw(Array("Content-Length: \(text.utf8.count)\r\n\r\n\(text)".utf8)) }

    /// Sends a request and returns its reply (taken out of the inbox).
    @discardableResult
    public func request(_ method: String, _ params: JSONValue = [:]) -> JSONValue {
        let id = nextID
        nextID += 1
        send(Message.request(id: .number(id), method: method, params: params).json)
        if let process {
            _ = process.reply(to: id)
            collect()
            if holdIncoming {
                held.append(contentsOf: inbox.filter(\.isNotification))
                inbox.removeAll(where: \.isNotification)
            }
        }
        guard let index = inbox.firstIndex(where: { $0["id"] == .integer(id) && !$0.isNotification }) else { return .null }
        return inbox.remove(at: index)
    }

    public func notify(_ method: String, _ params: JSONValue = [:]) {
        send(Message.notification(method: method, params: params).json)
    }

    private func send(_ value: JSONValue) {
        sendRaw(String(decoding: JSONSerializer().serialize(value), as: UTF8.self))
        if holdIncoming {
            held.append(contentsOf: inbox.filter(\.isNotification))
            inbox.removeAll(where: \.isNotification)
        }
    }

    public func take(_ method: String) -> [JSONValue] {
        let taken = inbox.filter { $0["method"] == .string(method) }
        inbox.removeAll { $0["method"] == .string(method) }
        return taken
    }

    // MARK: Protocol behaviour

    @discardableResult
    public func initialize(user: String = "ann", encodings: [String] = ["utf-16"]) -> JSONValue {
        let reply = request("initialize", [
            "protocolVersion": 1, "clientInfo": ["name": "test"], "user": ["name": .string(user)],
            "capabilities": ["general": ["positionEncodings": .array(encodings.map { .string($0) })]],
        ])
        if let chosen = reply["result"]?["capabilities"]?["positionEncoding"]?.stringValue, let e = PositionEncoding(rawValue: chosen) {
            encoding = e
        }
        notify("initialized")
        return reply
    }

    @discardableResult
    public func open(_ uri: String, text: String, conflict: String? = nil) -> JSONValue {
        self.uri = uri
        self.text = Array(text.unicodeScalars)
        var params: [String: JSONValue] = ["uri": .string(uri), "text": .string(text)]
        if let conflict { params["conflict"] = .string(conflict) }
        return opened(request("document/open", .object(params)))
    }

    /// Reopens this editor's document after its daemon went away, as a client does: what it
    /// shows now (`text`, with whatever it typed meanwhile), its view, and the epoch and daemon
    /// revision it is at.
    @discardableResult
    public func reopen() -> JSONValue {
        var params: [String: JSONValue] = ["uri": .string(uri), "text": .string(string), "epoch": .integer(Int64(epoch)),
                                           "revision": .integer(Int64(daemonRevision))]
        if let view { params["view"] = .string(view) }
        return opened(request("document/open", .object(params)))
    }

    /// Takes in `document/open`'s reply: applies its changes and starts over at its epoch.
    private func opened(_ reply: JSONValue) -> JSONValue {
        for change in reply["result"]?["changes"]?.arrayValue ?? [] { apply(change) }
        if let result = reply["result"], result != .null {
            epoch = Int(result["epoch"]?.integerValue ?? 0)
            view = result["view"]?.stringValue
            editorRevision = 0
            daemonRevision = 0
        }
        return reply
    }

    /// Replaces `range` (scalar offsets) in the editor's text and tells the daemon, as a range
    /// change in the negotiated encoding. Returns the reply.
    @discardableResult
    public func edit(_ range: Range<Int>, with replacement: String, asRequest: Bool = true) -> JSONValue {
        let start = position(of: range.lowerBound), end = position(of: range.upperBound)
        text.replaceSubrange(range, with: Array(replacement.unicodeScalars))
        return sendEdit(["range": ["start": start, "end": end], "text": .string(replacement)], asRequest: asRequest)
    }

    /// Sends one change object describing an edit already made to `text`.
    @discardableResult
    public func sendEdit(_ change: JSONValue, asRequest: Bool = true) -> JSONValue {
        editorRevision += 1
        let params: JSONValue = ["uri": .string(uri), "epoch": .integer(Int64(epoch)), "revision": .integer(Int64(daemonRevision)), "changes": [change]]
        if asRequest { return request("document/edit", params) }
        notify("document/edit", params)
        return .null
    }

    /// Applies daemon messages: everything in the inbox, or `count` held ones.
    public func deliver(held count: Int = Int.max) {
        collect()
        held.append(contentsOf: inbox.filter(\.isNotification))
        inbox.removeAll(where: \.isNotification)
        let batch = held.prefix(count)
        held.removeFirst(batch.count)
        for message in batch { receive(message) }
    }

    public func deliverInbox() {
        collect()
        let messages = inbox.filter(\.isNotification)
        inbox.removeAll(where: \.isNotification)
        if holdIncoming { held.append(contentsOf: messages) } else { for m in messages { receive(m) } }
    }

    private func receive(_ message: JSONValue) {
        guard message["method"] == "document/edit", let params = message["params"], params["uri"] == .string(uri) else { return }
        guard params["epoch"] == .integer(Int64(epoch)), params["revision"] == .integer(Int64(editorRevision)) else {
            dropped += 1
            return
        }
        for change in params["changes"]?.arrayValue ?? [] { apply(change) }
        daemonRevision += 1
        if let hash = params["hash"]?.stringValue, hash != TextHashForTests.sha256(string) { hashMismatches += 1 }
    }

    public func apply(_ change: JSONValue) {
        guard let range = change["range"], let start = offset(of: range["start"]), let end = offset(of: range["end"]),
              let replacement = change["text"]?.stringValue else { return }
        text.replaceSubrange(start..<end, with: Array(replacement.unicodeScalars))
    }

    public var string: String { String(String.UnicodeScalarView(text)) }

    // MARK: Positions in the negotiated encoding

    public func position(of offset: Int) -> JSONValue {
        let text = self.text
        var line = 0, lineStart = 0
        for i in 0..<offset where text[i] == "\n" { line += 1; lineStart = i + 1 }
        let character = encoding.width(of: text[lineStart..<offset])
        return ["line": .integer(Int64(line)), "character": .integer(Int64(character))]
    }

    public func offset(of position: JSONValue?) -> Int? {
        guard let line = position?["line"]?.integerValue, let character = position?["character"]?.integerValue else { return nil }
        let text = self.text   // a local copy (no copying: shared storage) scans without a property access per character
        var i = 0, l = 0
        while l < line { guard i < text.count else { return nil }; if text[i] == "\n" { l += 1 }; i += 1 }
        var units = 0
        while units < character { guard i < text.count, text[i] != "\n" else { return nil }; units += encoding.width(of: text[i]); i += 1 }
        return i
    }
}

/// SHA-256 hex computed independently of the daemon's own helper.
public enum TextHashForTests {
    public static func sha256(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension JSONValue {
    /// True for a message with a method (a notification or a request from the daemon).
    public var isNotification: Bool { objectValue?.keys.contains("method") ?? false }
}
