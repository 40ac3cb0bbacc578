import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes

/// The sync rules of `PeerSession` with no socket and no crypto: decoded frames go straight in,
/// and what the session sends is read off a stand-in link.
@Suite struct PeerSessionTests {
    /// A link that only records: what the session sent (catch-up drained at once), and a cut.
    final class RecordingLink: PeerSessionLink {
        var session: PeerSession!
        var sent: [PeerFrame] = []
        var cutReason: String?
        let id = 1
        var state = PeerLinkState.established
        var wasEstablished = true
        var closeReason: String? { cutReason }
        let isIncoming = true
        let remoteHost: String? = nil
        let peerReplica: ReplicaID? = ReplicaID(77)
        let peerUser: String? = "peer"
        let address = "memory"
        let peerFingerprint: String? = nil
        let peerKey: [UInt8]? = nil
        let expectedFingerprint: String? = nil
        let isEncrypted = false
        let bytesIn = 0
        let bytesOut = 0
        var operationsIn: Int { session.operationsIn }
        var operationsOut: Int { session.operationsOut }
        var behind: Int { session.behind }
        var hasQueuedOutput: Bool { false }

        func send(_ frame: PeerFrame) { if state != .closed { sent.append(frame) } }
        func queueCatchUp(_ catchUp: CatchUp) {
            var catchUp = catchUp
            while state != .closed, let frame = session.nextFrame(of: &catchUp) { sent.append(frame) }
        }
        func cut(_ reason: String) {
            guard state != .closed else { return }
            cutReason = reason
            state = .closed
        }
        func close(_ reason: String) { cut(reason) }
        func sendOperations(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument) {
            session.sendOperations(operations, of: document)
        }
        func sendPresence(_ message: PresenceMessage) { session.sendPresence(message) }
        func sendStability(_ message: JSONValue) { session.sendStability(message) }
        var scope: DocumentScope? { .general }
        func sendProjectFrame(key: String, payload: [UInt8]) {}
        func announce(_ document: SharedDocument) { session.announce(document) }
        func sendWhole(_ document: SharedDocument) { session.sendWhole(document) }
        func retryRebase(of document: SharedDocument) { session.retryRebase(of: document) }
        func takeQueuedPresence(now: Double) -> [PresenceMessage] { session.takeQueuedPresence(now: now) }
        func refusedPresence(_ reason: String) { session.refusedPresence(reason) }
        func tick(now: Double, interval: Double) {}
        func sendDueDigests() { session.sendDueDigests() }
        func hasCaughtUp(on uri: String) -> Bool { session.hasCaughtUp(on: uri) }

        /// What was sent of document `uri`: its operations, decoded.
        func operations(of uri: String) throws -> [ReplicatingArrayOperation<Unicode.Scalar>] {
            try sent.flatMap { frame -> [ReplicatingArrayOperation<Unicode.Scalar>] in
                guard case .operations(uri, _, let payload) = frame else { return [] }
                return try ReplicatingArrayCoding.decode(payload, as: Unicode.Scalar.self)
            }
        }
    }

    /// A daemon whose editor shares "notes" (edited as a replica the daemon lent its view), and a session over a recording link.
    static func scene(configure: (inout Daemon.Configuration) -> Void = { _ in }) -> (Daemon, PeerSession, RecordingLink, EditorSession) {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = Daemon.Configuration(userName: "here")
        configure(&configuration)
        var next: UInt64 = 400
        let daemon = Daemon(configuration: configuration, logger: logger, replicaSource: { next += 1; return ReplicaID(next) })
        let editor = daemon.makeSession { _ in }
        _ = editor.handleRequest(id: .number(1), method: "initialize", params: ["processId": .null])
        _ = editor.handleRequest(id: .number(2), method: "document/open", params: ["uri": "notes", "text": "hello\n"])
        let link = RecordingLink()
        let session = PeerSession(daemon: daemon.peerHost, link: link)
        link.session = session
        return (daemon, session, link, editor)
    }

    static func list(initial: Bool, _ entries: [JSONValue]) -> PeerFrame {
        .documents(["initial": .bool(initial), "documents": .array(entries)])
    }

    @Test func afterTheFirstListWhatThePeerDidNotListIsSentWhole() throws {
        let (daemon, session, link, _) = Self.scene()
        try session.handle(Self.list(initial: true, []))
        #expect(link.cutReason == nil)
        var copy = ReplicatingText(replica: ReplicaID(9))
        for operation in try link.operations(of: "notes") { copy.integrate(operation) }
        #expect(copy.string == "hello\n" && copy.string == daemon.documents["notes"]?.text.string)
    }

    @Test func aListedDocumentGetsOnlyWhatThePeerLacks() throws {
        let (daemon, session, link, editor) = Self.scene()
        let document = try #require(daemon.documents["notes"])
        // The peer has the first three characters of the editor's replica.
        try session.handle(Self.list(initial: true, [["uri": "notes", "id": .string(String(document.id)),
                                                     "version": .object([String(try #require(editor.view(of: "notes")).replica.rawValue): 3])]]))
        let sent = try link.operations(of: "notes")
        let inserted = sent.reduce(0) { total, operation in
            if case .insert(let insertion) = operation { return total + insertion.count }
            return total
        }
        #expect(inserted == 3, "\(sent)")
    }

    @Test func aVersionVectorClaimingEditsThisDaemonNeverMadeIsCut() throws {
        let (daemon, session, link, editor) = Self.scene()
        let document = try #require(daemon.documents["notes"])
        try session.handle(Self.list(initial: true, [["uri": "notes", "id": .string(String(document.id)),
                                                     "version": .object([String(try #require(editor.view(of: "notes")).replica.rawValue): 1000])]]))
        #expect(link.cutReason?.hasPrefix("version vector from the future") == true, "\(link.cutReason ?? "")")
    }

    @Test func aListOverTheLimitIsCutBeforeAnyEntryIsUsed() throws {
        let (daemon, session, link, _) = Self.scene { $0.maximumDocumentsPerList = 2 }
        let entries: [JSONValue] = (0..<3).map { ["uri": .string("new\($0)"), "id": .string(String(100 + $0)), "version": [:]] }
        try session.handle(Self.list(initial: false, entries))
        #expect(link.cutReason == "3 documents in one list exceed the limit of 2")
        #expect(daemon.documents.keys.sorted() == ["notes"], "no entry made a document")
    }

    @Test func newOperationsGoInOnceAndTheirEchoChangesNothing() throws {
        let (daemon, session, link, _) = Self.scene()
        let theirs = ReplicatingText("from afar\n", replica: ReplicaID(77))
        let frame = PeerFrame.operations(uri: "far", documentID: 4242, payload: ReplicatingArrayCoding.encode(theirs.operations()))
        try session.handle(frame)
        try session.handle(frame)
        #expect(link.cutReason == nil)
        #expect(daemon.documents["far"]?.text.string == "from afar\n" && daemon.documents["far"]?.id == 4242)
        #expect(session.operationsIn == 2 * theirs.operations().count)
    }

    @Test func aFrameWithTooManyOperationsIsCutAndNothingOfItApplies() throws {
        let (daemon, session, link, _) = Self.scene { $0.maximumOperationsPerFrame = 2 }
        var theirs = ReplicatingText(replica: ReplicaID(77))
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for word in ["a", "b", "c"] { operations += theirs.replace(theirs.count..<theirs.count, with: Array(word.unicodeScalars)) }
        try session.handle(.operations(uri: "far", documentID: 4242, payload: ReplicatingArrayCoding.encode(operations)))
        #expect(link.cutReason != nil)
        #expect(daemon.documents["far"] == nil)
    }

    @Test func anOperationThatContradictsTheDocumentIsCutAndNotApplied() throws {
        let (daemon, session, link, _) = Self.scene()
        let document = try #require(daemon.documents["notes"])
        // The same element IDs as the editor's first characters, with other content.
        let forged = document.text.operations().map { operation -> ReplicatingArrayOperation<Unicode.Scalar> in
            guard case .insert(var insertion) = operation, case .elements(let elements) = insertion.content else { return operation }
            insertion.content = .elements(InsertedElements(elements.map { _ -> Unicode.Scalar in "x" }))
            return .insert(insertion)
        }
        try session.handle(.operations(uri: "notes", documentID: document.id, payload: ReplicatingArrayCoding.encode(forged)))
        #expect(link.cutReason?.hasPrefix("invalid operation for notes") == true, "\(link.cutReason ?? "")")
        #expect(document.text.string == "hello\n")
    }
}
