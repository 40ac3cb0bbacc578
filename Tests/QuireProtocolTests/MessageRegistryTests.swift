import Foundation
import JSON
import QuireProtocol
import Testing

/// The registry is the one list of editor messages: each method once per direction, each in the
/// spec's tables, each decoded by its own type.
@Suite struct MessageRegistryTests {
    static let specification: String = {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: repository.appendingPathComponent("protocol/README.md"), encoding: .utf8)) ?? ""
    }()

    @Test func everyMethodIsListedOncePerDirection() {
        let requests = MessageRegistry.requests.map { $0.method }
        let notifications = MessageRegistry.editorNotifications.map { $0.method }
        let daemon = MessageRegistry.daemonNotifications.map { $0.method }
        #expect(Set(requests).count == requests.count, "\(requests)")
        #expect(Set(notifications).count == notifications.count, "\(notifications)")
        #expect(Set(daemon).count == daemon.count, "\(daemon)")
        #expect(MessageRegistry.all.count == Set(requests + notifications + daemon).count)
    }

    @Test func everyMethodIsInTheSpecificationsTables() {
        #expect(!Self.specification.isEmpty)
        for entry in MessageRegistry.all {
            #expect(Self.specification.contains("| `\(entry.method)`") || Self.specification.contains(", `\(entry.method)` |"),
                    "protocol/README.md has no row for \(entry.method)")
        }
    }

    @Test func methodsFindTheirTypes() {
        #expect(MessageRegistry.request("document/open") == OpenDocumentRequest.self)
        #expect(MessageRegistry.request("document/undo") == UndoDocumentRequest.self)
        #expect(MessageRegistry.request("document/redo") == RedoDocumentRequest.self)
        #expect(MessageRegistry.request("peer/status") == PeerStatusRequest.self)
        #expect(MessageRegistry.notification("cursor/update") == CursorMessage.self)
        #expect(MessageRegistry.request("cursor/update") == nil, "cursor/update is a notification only")
        #expect(MessageRegistry.notification("document/open") == nil)
        #expect(MessageRegistry.request("document/nope") == nil && MessageRegistry.notification("document/nope") == nil)
    }

    @Test func kindsAndDirectionsFollowFromTheLists() throws {
        let byMethod = Dictionary(MessageRegistry.all.map { ($0.method, $0) }, uniquingKeysWith: { a, _ in a })
        let edit = try #require(byMethod["document/edit"])
        #expect(edit.kind == .requestOrNotification && edit.direction == .both)
        let cursor = try #require(byMethod["cursor/update"])
        #expect(cursor.kind == .notification && cursor.direction == .both)
        let changed = try #require(byMethod["peer/changed"])
        #expect(changed.kind == .notification && changed.direction == .daemonToEditor)
        let open = try #require(byMethod["document/open"])
        #expect(open.kind == .request && open.direction == .editorToDaemon)
    }

    /// Requests that name one document read `uri` and nothing else.
    @Test(arguments: [CloseDocumentRequest.method, DocumentTextRequest.method, UndoDocumentRequest.method,
                      RedoDocumentRequest.method, SaveDocumentRequest.method])
    func documentRequestsNeedAURI(method: String) throws {
        let type = try #require(MessageRegistry.request(method))
        do {
            _ = try type.init(params: ["text": "x"])
            Issue.record("\(method) decoded without a uri")
        } catch {
            #expect(error.message == "Invalid params: params.uri: missing")
        }
        #expect(throws: Never.self) { try type.init(params: ["uri": "a", "epoch": 3]) }
    }

    @Test func resyncChecksWhatItsTextIsBasedOn() {
        #expect(throws: ResponseError.self) { try ResyncDocumentRequest(params: ["uri": "a", "epoch": 1]) }
        #expect(throws: ResponseError.self) { try ResyncDocumentRequest(params: ["uri": "a", "text": "x"]) }
        #expect(throws: ResponseError.self) { try ResyncDocumentRequest(params: ["uri": "a", "base": "x"]) }
        #expect(throws: Never.self) { try ResyncDocumentRequest(params: ["uri": "a", "text": "x", "epoch": 1, "revision": 0]) }
    }

    @Test func connectReadsItsTargetAndFingerprint() throws {
        let tcp = try ConnectRequest(params: ["port": 4000, "fingerprint": "00112233-44556677-8899aabb-ccddeeff"])
        #expect(tcp.target == .tcp(host: "127.0.0.1", port: 4000) && tcp.fingerprint != nil)
        #expect(try ConnectRequest(params: ["command": "ssh far quire"]).target == .command("ssh far quire"))
        #expect(throws: ResponseError.self) { try ConnectRequest(params: ["port": 0]) }
        #expect(throws: ResponseError.self) { try ConnectRequest(params: ["port": 4000, "fingerprint": "abc"]) }
    }

    @Test func resultsEncodeThemselves() {
        #expect(UndoResult(uri: "a", done: false).json == ["uri": "a", "done": false])
        #expect(MergeDocumentRequest.Result(uri: "a", merged: 12).json == ["uri": "a", "merged": 12])
        #expect(NullResult().json == .null)
        let link = PeerStatusRequest.Link(link: 2, state: "handshaking", user: "", address: "127.0.0.1:9", bytesIn: 1, bytesOut: 2,
                                          operationsIn: 0, operationsOut: 0, behind: 0, encrypted: false, fingerprint: nil, pinned: true)
        #expect(link.json["fingerprint"] == .null && link.json["pinned"] == true && link.json["bytesOut"] == 2)
        let peers = PeerStatusRequest.Result(replica: "r", fingerprint: "f", listening: [4000], links: [link], documents: [])
        let status = StatusRequest.Result(sessionID: 1, replica: "s", sessions: 1, documents: [], peers: peers, storage: nil, summary: ["editors": 1])
        #expect(status.json["storage"] == .null && status.json["peers"]?["listening"] == [4000] && status.json["summary"]?["editors"] == 1)
        let stored = StatusRequest.Storage(dataDir: "/d", durability: "sync", failure: nil)
        #expect(stored.json == ["dataDir": "/d", "durability": "sync", "failure": .null])
    }
}
