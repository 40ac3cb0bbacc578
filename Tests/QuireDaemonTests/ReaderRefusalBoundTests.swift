import Foundation
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A reader's writes are refused, and each refused document is remembered (and logged) once per
/// link. A reader sending writes to ever new names of its project's scope (valid document names
/// it need not hold) would grow that memory, and the log, by a kilobyte a frame for as long as
/// the link lives: at most `maximumRefusedSubjects` are remembered and logged, the rest dropped
/// without a word, and nothing of any of them is applied.
@Suite(.serialized) struct ReaderRefusalBoundTests {
    @Test func aReadersWritesToEverNewNamesCostBoundedMemoryAndLog() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "reader-bound")
        let net = PeerTestNetwork()
        let log = LogCapture()
        let host = net.makeDaemon(48_900, log: log), joiner = net.makeDaemon(48_910)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "mallory")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("reader-bound-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/a.txt") == "a\n" })
        let changed = hostEditor.request("project/role", ["key": .string(key), "member": "mallory", "role": "read"])
        #expect(changed["result"]?["role"] == "read", "\(changed)")
        net.pump([host, joiner])
        let reader = try #require(wire.a), hostSide = try #require(wire.b)
        let documentsBefore = host.documents.count
        let payload = ReplicatingArrayCoding.encode(ReplicatingText("x", replica: ReplicaID(424_242)).operations())
        let sent = PeerSession.maximumRefusedSubjects + 500
        for index in 0..<sent {
            reader.send(.operations(uri: "@\(key)/" + String(repeating: "n", count: 900) + "\(index)", documentID: UInt64(index + 1), payload: payload))
            if index % 100 == 0 { net.pump([host, joiner]) }
        }
        net.pump([host, joiner])
        #expect(hostSide.state == .established, "a reader is not cut for writing: \(hostSide.closeReason ?? "")")
        #expect(hostSide.session.refusedWrites.count == PeerSession.maximumRefusedSubjects)
        #expect(host.documents.count == documentsBefore, "nothing of them is applied")
        let refusals = log.all.filter { $0.contains("not applied nor relayed") }
        #expect(refusals.count == PeerSession.maximumRefusedSubjects, "\(refusals.count)")
        #expect(refusals.last?.contains("every further write from this link is dropped without a word") == true)
    }
}
