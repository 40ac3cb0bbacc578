import Dispatch
import Foundation
import Logging
import Testing
@testable import QuireDaemon
import QuireProject
import QuireTestSupport

/// While a project is joined, both stores' own-files makers wait: the joiner's while files are
/// still arriving, the host's while it sends the project in bulk; once the join is done,
/// neither pass holds them any more (`ProjectService.holdOwnFilesWhileJoining`).
@Suite struct JoinHoldsOwnFilesTests {
    func heldUntil(_ store: DocumentStore) -> UInt64 {
        store.maker.condition.lock()
        defer { store.maker.condition.unlock() }
        return store.maker.heldUntil
    }

    @Test func bothMakersWaitWhileTheFilesGoAcrossAndNotAfter() throws {
        // 10 files of 400 lines: some 130,000 characters, over the bulk threshold.
        var files: [String: [UInt8]] = [:]
        for index in 0..<10 {
            files["src/file\(index).swift"] = Array((0..<400).map { "let <B\(index)_\($0)> = g(\($0)) + \"t\"\n" }.joined().utf8)
        }
        #expect(files.values.reduce(0) { $0 + $1.count } >= ProjectService.bulkBehindElements)
        let root = try ProjectFixture.folder(files, name: "held")
        let hostStore = try DocumentStore(path: DaemonProcess.temporaryDirectory("held-host"), logger: Logger(label: "test"))
        let joinerStore = try DocumentStore(path: DaemonProcess.temporaryDirectory("held-joiner"), logger: Logger(label: "test"))
        let net = PeerTestNetwork()
        let host = net.makeDaemon(1900, store: hostStore), joiner = net.makeDaemon(1950, store: joinerStore)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "bob")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("held-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let hostProject = try #require(host.projects.project(key: key)), joinerProject = try #require(joiner.projects.project(key: key))
        try hostProject.roster?.change(MemberKey(joiner.identity.publicKey)!, to: .write, signer: host.identity.privateKey)
        joinerProject.secret = hostProject.secret
        joinerProject.redeeming = false
        try joiner.addPeerSecret(hostProject.secret, scope: .project(key: key))
        let wire = try net.link(host, joiner, paced: true, scope: .project(key: key))

        var hostHeld = false, joinerHeldWhilePartial = false, steps = 0
        while ProjectPeerTests.contents(of: directory).count < files.count {
            steps += 1
            guard steps < 3_000 else { break }
            _ = net.carry(wire, atMost: 1_500, daemons: [host, joiner])
            let now = DispatchTime.now().uptimeNanoseconds
            host.projects.syncDisk()
            if heldUntil(hostStore) > now { hostHeld = true }
            joiner.projects.syncDisk()
            let written = ProjectPeerTests.contents(of: directory).count
            if written > 0, written < files.count, heldUntil(joinerStore) > now { joinerHeldWhilePartial = true }
        }
        #expect(ProjectPeerTests.contents(of: directory) == files.mapValues { Data($0) }, "after \(steps) steps")
        #expect(hostHeld, "the host's maker waited while it sent the project")
        #expect(joinerHeldWhilePartial, "the joiner's maker waited while files were still arriving")

        // Done: let the links settle. The host's send ending holds its maker once more for
        // `joinHoldRenewalSeconds` (the joiner is still writing what it got); further passes
        // hold neither maker.
        let sending = hostProject.bulkSendSince != nil, ended = DispatchTime.now().uptimeNanoseconds
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { hostProject.bulkSendSince == nil })
        if sending {
            #expect(heldUntil(hostStore) >= ended + UInt64(ProjectService.joinHoldRenewalSeconds * 1e9), "the host's maker waits once more when the send ends")
        }
        let (hostBefore, joinerBefore) = (heldUntil(hostStore), heldUntil(joinerStore))
        host.projects.syncDisk()
        joiner.projects.syncDisk()
        #expect(heldUntil(hostStore) == hostBefore && heldUntil(joinerStore) == joinerBefore, "a pass after the join renewed a hold")
        _ = (hostTransport, joinerTransport)
    }
}
