import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import ReplicatingTypes

/// A deleted file's document is forgotten once every holder saw the delete
/// (protocol/decisions/project-tree.md, *Forgetting a deleted file's document*): the document
/// quota and the daemon-wide cap no longer creep with file churn, its store files go, a restart
/// does not load it, and an open editor or a member that was away keeps what it typed.
@Suite struct DeletedFileForgettingTests {
    /// A host sharing a folder and a joiner linked to it, both in this process.
    struct Pair {
        let net = PeerTestNetwork()
        let host: Daemon
        let joiner: Daemon
        let root: String
        let copy: String
        let key: String
        var wire: PeerTestNetwork.Wire
        let transports: [RecordingTransport]
        let hostEditor: TestEditor
        let joinerEditor: TestEditor

        init(_ base: UInt64, files: [String: [UInt8]], hostStore: DocumentStore? = nil,
             configure: @escaping (inout Daemon.Configuration) -> Void = { _ in }) throws {
            root = try ProjectFixture.folder(files, name: "churn")
            host = net.makeDaemon(base, store: hostStore, configure: configure)
            joiner = net.makeDaemon(base + 100, configure: configure)
            transports = [RecordingTransport(), RecordingTransport()]
            host.transport = transports[0]
            joiner.transport = transports[1]
            hostEditor = TestEditor(daemon: host)
            joinerEditor = TestEditor(daemon: joiner)
            hostEditor.initialize(user: "ann")
            joinerEditor.initialize(user: "bob")
            let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
            key = try #require(shared["key"]?.stringValue)
            copy = DaemonProcess.temporaryDirectory("forget-join") + "/copy"
            _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(copy)])
            wire = try net.link(joiner, host, scope: .project(key: key))
        }

        var daemons: [Daemon] { [host, joiner] }

        func settle(until done: () -> Bool) -> Bool { ProjectPeerTests.settle(net, daemons, until: done) }

        /// Both daemons look at their deleted files' documents and finish the rounds that starts.
        func sweep() {
            for _ in 0..<3 {
                for daemon in daemons { daemon.forgetter.sweep() }
                net.pump(daemons)
            }
            for daemon in daemons { daemon.forgetter.flush() }
        }

        func project(of daemon: Daemon) -> SharedProject? { daemon.projects.project(key: key) }

        /// The documents of `daemon`'s project (its scope's count).
        func documentCount(_ daemon: Daemon) -> Int { daemon.registry.usage.totals(of: .project(key: key)).documents }

        /// Project document names of `daemon` (the registry's own count).
        func held(_ daemon: Daemon) -> Int { daemon.documents.keys.filter { $0.hasPrefix("@\(key)/") }.count }
    }

    /// Writes `names` into `folder` (each holding a code-like token), or removes them.
    static func churn(_ folder: String, _ names: [String], remove: Bool = false) throws {
        for name in names {
            if remove { try FileManager.default.removeItem(atPath: folder + "/" + name) } else {
                try ProjectFixture.write(Array("let <A\(name.count)> = f(\"\(name)\")\n".utf8), to: folder + "/" + name)
            }
        }
    }

    @Test func churnDoesNotCreepUpToTheDocumentQuota() throws {
        let pair = try Pair(1_000, files: ["keep.swift": Array("f(x)\n".utf8)]) { $0.maximumDocumentsPerScope = 8 }
        #expect(pair.settle { ProjectFixture.read(pair.copy + "/keep.swift") == "f(x)\n" })
        // Five times six generated files come and go on the host (30 documents in all, against a
        // quota of 8): each time the joiner gets them, then their deletes, then both forget them.
        for round in 0..<5 {
            let names = (0..<6).map { "gen/out\(round)_\($0).swift" }
            try Self.churn(pair.root, names)
            pair.project(of: pair.host)?.needsScan = true
            #expect(pair.settle { names.allSatisfy { FileManager.default.fileExists(atPath: pair.copy + "/" + $0) } }, "round \(round)")
            #expect(pair.wire.a?.state == .established, "round \(round): \(pair.wire.a?.closeReason ?? "")")
            try Self.churn(pair.root, names, remove: true)
            pair.project(of: pair.host)?.needsScan = true
            #expect(pair.settle { names.allSatisfy { !FileManager.default.fileExists(atPath: pair.copy + "/" + $0) } }, "round \(round)")
            pair.sweep()
            #expect(pair.documentCount(pair.host) == 1 && pair.documentCount(pair.joiner) == 1,
                    "round \(round): \(pair.documentCount(pair.host)) and \(pair.documentCount(pair.joiner)) documents")
        }
        #expect(pair.wire.a?.state == .established, "\(pair.wire.a?.closeReason ?? "")")
        #expect(pair.held(pair.host) == 1 && pair.held(pair.joiner) == 1, "the daemon-wide count falls too")
        #expect(pair.host.forgetter.forgottenCount == 30 && pair.joiner.forgetter.forgottenCount == 30)
        // The tree still knows every deleted file (a late operation cannot bring one back by accident).
        #expect(pair.project(of: pair.joiner)?.tree.deletedFiles.count == 30)
    }

    @Test func aFileDeletedUnderAnOpenEditorKeepsItsDocumentAndTheSaveBringsItBack() throws {
        let pair = try Pair(1_200, files: ["a.swift": Array("f(x)\n".utf8)])
        #expect(pair.settle { ProjectFixture.read(pair.copy + "/a.swift") == "f(x)\n" })
        let editor = pair.joinerEditor
        let opened = editor.request("document/open", ["file": .string(pair.copy + "/a.swift"), "text": "f(x)\n"])
        editor.uri = try #require(opened["result"]?["uri"]?.stringValue)
        editor.text = Array("f(x)\n".unicodeScalars)
        // The host deletes the file while the joiner's editor shows it and types in it.
        try FileManager.default.removeItem(atPath: pair.root + "/a.swift")
        pair.project(of: pair.host)?.needsScan = true
        let uri = editor.uri
        #expect(pair.settle { pair.project(of: pair.joiner)?.tree.deletedFiles.count == 1 })
        _ = editor.edit(4..<4, with: " <B7>")
        pair.net.pump(pair.daemons)
        for _ in 0..<3 { pair.sweep() }
        #expect(pair.joiner.documents[uri] != nil && pair.host.documents[uri] != nil, "no daemon forgets what an editor shows")
        #expect(FileManager.default.fileExists(atPath: pair.copy + "/a.swift"), "the daemon never removes a file under an open buffer")
        // The save, once the buffer is closed, brings the file back at its path with what the
        // editor showed, on both sides.
        #expect(editor.request("document/save", ["uri": .string(uri)])["error"] == nil)
        #expect(editor.request("document/close", ["uri": .string(uri)])["error"] == nil)
        pair.project(of: pair.joiner)?.needsScan = true
        #expect(pair.settle { ProjectFixture.read(pair.root + "/a.swift") == "f(x) <B7>\n" }, "\(ProjectFixture.read(pair.root + "/a.swift") ?? "nil")")
        #expect(pair.project(of: pair.host)?.tree.deletedFiles.isEmpty == true)
    }

    @Test func aMemberAwayWithAnEditToADeletedFileKeepsTheDocumentUntilItsEditArrived() throws {
        var pair = try Pair(1_400, files: ["a.swift": Array("f(x)\n".utf8), "b.swift": Array("g(y)\n".utf8)])
        #expect(pair.settle { ProjectFixture.read(pair.copy + "/a.swift") == "f(x)\n" })
        let uri = try #require(pair.project(of: pair.host)?.view.files[try ProjectPath("a.swift")].map { pair.project(of: pair.host)!.uri(of: $0) })
        // The joiner goes away and edits a.swift there (with another program) while the host deletes it.
        pair.net.sever(pair.wire)
        try ProjectFixture.write(Array("f(x) <C9>\n".utf8), to: pair.copy + "/a.swift")
        if let project = pair.project(of: pair.joiner) { pair.joiner.projects.scanDisk(project) }
        #expect(pair.joiner.documents[uri]?.text.string == "f(x) <C9>\n")
        try FileManager.default.removeItem(atPath: pair.root + "/a.swift")
        if let project = pair.project(of: pair.host) { pair.host.projects.scanDisk(project) }
        #expect(pair.project(of: pair.host)?.tree.deletedFiles.count == 1)
        pair.sweep()
        #expect(pair.host.documents[uri] != nil, "a holder was not reached: the document stays")
        // It comes back: its edit reaches the host's copy (the delete stands, as before).
        pair.wire = try pair.net.link(pair.joiner, pair.host, scope: .project(key: pair.key))
        #expect(pair.settle { pair.host.documents[uri]?.text.string == "f(x) <C9>\n" })
        #expect(pair.settle { !FileManager.default.fileExists(atPath: pair.copy + "/a.swift") })
        // Once both saw the delete, both forget it; b.swift is untouched.
        pair.sweep()
        #expect(pair.host.documents[uri] == nil && pair.joiner.documents[uri] == nil)
        #expect(ProjectFixture.read(pair.copy + "/b.swift") == "g(y)\n")
        #expect(pair.wire.a?.state == .established)
    }

    /// A refused document's rounds come 1, 2, 4 and 8 sweeps apart, then every `retrySweeps`.
    @Test func refusedRoundsBackOffToAMinute() {
        #expect((1...6).map(DocumentForgetter.retryDelay(afterRounds:)) == [1, 2, 4, 8, 12, 12])
    }

    /// A round that reached a peer still removing the file is asked again within a few sweeps
    /// (1, then 2, 4 and 8, at most `retrySweeps`), not a minute later: forgetting on real
    /// daemons followed the churn by a minute per refusal.
    @Test func aRoundRefusedWhileThePeerStillRemovesTheFileIsAskedAgainAtTheNextSweep() throws {
        let pair = try Pair(1_500, files: ["a.swift": Array("f(x)\n".utf8), "b.swift": Array("g(y)\n".utf8)])
        #expect(pair.settle { ProjectFixture.read(pair.copy + "/a.swift") == "f(x)\n" })
        let project = try #require(pair.project(of: pair.host))
        let uri = project.uri(of: try #require(project.view.files[try ProjectPath("a.swift")]))
        try FileManager.default.removeItem(atPath: pair.root + "/a.swift")
        pair.host.projects.scanDisk(project)
        // The delete reaches the joiner's tree, but no pass of the joiner's removed the file yet.
        pair.net.pump(pair.daemons)
        #expect(pair.project(of: pair.joiner)?.tree.deletedFiles.count == 1)
        try #require(FileManager.default.fileExists(atPath: pair.copy + "/a.swift"))
        pair.host.forgetter.sweep()
        pair.net.pump(pair.daemons)
        pair.host.forgetter.flush()
        #expect(pair.host.documents[uri] != nil, "the joiner still had the file: the round failed")
        // The joiner's pass removes it; the host's next sweeps ask again and forget.
        pair.joiner.projects.syncDisk()
        #expect(!FileManager.default.fileExists(atPath: pair.copy + "/a.swift"))
        var sweeps = 0
        while pair.host.documents[uri] != nil, sweeps < DocumentForgetter.retrySweeps {
            sweeps += 1
            pair.host.forgetter.sweep()
            pair.net.pump(pair.daemons)
            pair.host.forgetter.flush()
        }
        #expect(pair.host.documents[uri] == nil && sweeps <= 2, "forgotten after \(sweeps) more sweeps")
        #expect(ProjectFixture.read(pair.copy + "/b.swift") == "g(y)\n")
    }

    @Test func aPeerCannotMakeADaemonForgetALiveFilesDocument() throws {
        let pair = try Pair(1_600, files: ["a.swift": Array("f(x)\n".utf8)])
        #expect(pair.settle { ProjectFixture.read(pair.copy + "/a.swift") == "f(x)\n" })
        let project = try #require(pair.project(of: pair.host))
        let uri = project.uri(of: try #require(project.view.files[try ProjectPath("a.swift")]))
        let document = try #require(pair.host.documents[uri])
        // A forget round said to have succeeded (a lying echo) for a file that is not deleted here.
        pair.host.forgetter.roundSucceeded(document)
        pair.host.forgetter.flush()
        #expect(pair.host.documents[uri] === document)
        // A peer's forget ask for it is answered with a failure; nothing is forgotten.
        let link = try ProjectFixture.link(to: pair.host, key: pair.key)
        pair.host.stability.receive(StabilityMessage(uri: uri, documentID: document.id, round: "99:1", phase: .ask, ok: false, reason: nil,
                                                     reached: [], holders: [:], retire: [], forget: true), from: link)
        pair.net.pump(pair.daemons)
        pair.host.stability.tick()
        #expect(pair.host.documents[uri] === document)
        #expect(pair.host.stability.stabilityRounds.isFinished(StabilityRounds.Key(document: document.id, round: "99:1")))
        #expect(ProjectFixture.read(pair.root + "/a.swift") == "f(x)\n")
    }

    /// A daemon that relays another's forget round and forgets the document meanwhile (its own
    /// round succeeded first) still finishes the relayed round when the answer comes: otherwise
    /// the round stays under way for good, so its initiator never starts another one for the
    /// document (and never forgets it) and the rounds in all creep up to their limit.
    @Test func aRoundRelayedThroughADaemonThatForgetsTheDocumentMeanwhileStillFinishes() throws {
        let pair = try Pair(1_700, files: ["a.swift": Array("f(x)\n".utf8), "b.swift": Array("g(y)\n".utf8)])
        #expect(pair.settle { ProjectFixture.read(pair.copy + "/a.swift") == "f(x)\n" })
        let project = try #require(pair.project(of: pair.host))
        let uri = project.uri(of: try #require(project.view.files[try ProjectPath("a.swift")]))
        let document = try #require(pair.host.documents[uri])
        try FileManager.default.removeItem(atPath: pair.root + "/a.swift")
        project.needsScan = true
        #expect(pair.settle { !FileManager.default.fileExists(atPath: pair.copy + "/a.swift") })
        // A third member's forget round reaches the host, which passes it on to the joiner.
        let third = try ProjectFixture.link(to: pair.host, key: pair.key)
        let key = StabilityRounds.Key(document: document.id, round: "999:1")
        pair.host.stability.receive(StabilityMessage(uri: uri, documentID: document.id, round: key.round, phase: .ask, ok: false, reason: nil,
                                                     reached: [], holders: [:], retire: [], forget: true), from: third)
        #expect(pair.host.stability.stabilityRounds.active[key] != nil, "relayed to the joiner")
        // The host's own round succeeded meanwhile: it forgets the document.
        pair.host.forgetter.roundSucceeded(document)
        pair.host.forgetter.flush()
        #expect(pair.host.documents[uri] == nil)
        // The joiner's answer to the relayed round arrives.
        pair.net.pump(pair.daemons)
        pair.host.stability.tick()
        #expect(pair.host.stability.stabilityRounds.active[key] == nil && pair.host.stability.stabilityRounds.isFinished(key),
                "the relayed round finished and was answered")
    }

    @Test func storeFilesGoAndARestartLoadsNeitherThemNorTheirCount() throws {
        let data = DaemonProcess.temporaryDirectory("forget-store")
        let root = try ProjectFixture.folder(["keep.swift": Array("f(x)\n".utf8)], name: "stored")
        var uris: [String] = []
        var key = ""
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let (daemon, _) = ProjectFixture.daemon(1_800, store: store)
            let shared = try #require(ProjectFixture.share(daemon, root: root)["result"])
            key = try #require(shared["key"]?.stringValue)
            let project = try #require(daemon.projects.project(key: key))
            let names = (0..<5).map { "gen/\($0).swift" }
            try Self.churn(root, names)
            daemon.projects.scanDisk(project)
            daemon.commit()
            uris = names.compactMap { name in (try? ProjectPath(name)).flatMap { project.view.files[$0] }.map { project.uri(of: $0) } }
            #expect(uris.count == 5)
            let ids = uris.compactMap { daemon.documents[$0]?.id }
            try Self.churn(root, names, remove: true)
            daemon.projects.scanDisk(project)
            daemon.commit()
            // Packed documents wait until they have their own durable files.
            store.finishOwnFiles()
            daemon.forgetter.sweep()
            #expect(uris.allSatisfy { daemon.documents[$0] == nil }, "no peer holds them: forgotten at once")
            #expect(daemon.registry.usage.totals(of: .project(key: key)).documents == 1)
            let left = try FileManager.default.contentsOfDirectory(atPath: data + "/documents")
            for id in ids { #expect(!left.contains { $0.hasPrefix(DocumentFiles.directoryName(for: id)) }, "\(left)") }
            daemon.syncStorage()
        }
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let (daemon, _) = ProjectFixture.daemon(1_800, store: store)
        #expect(uris.allSatisfy { daemon.documents[$0] == nil })
        #expect(daemon.registry.usage.totals(of: .project(key: key)).documents == 1, "the count after a restart is what is held")
        #expect(daemon.documents.count == 1)
    }

    @Test func aCrashHalfwayThroughForgettingLeavesTheDocumentOrNothing() throws {
        let data = DaemonProcess.temporaryDirectory("forget-crash")
        let documents = data + "/documents"
        var kept: (uri: String, id: UInt64) = ("", 0)
        var gone: (uri: String, id: UInt64) = ("", 0)
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let daemon = PeerTestNetwork().makeDaemon(1_900, store: store)
            let editor = TestEditor(daemon: daemon)
            editor.initialize()
            _ = editor.open("kept", text: "f(x) <K1>\n")
            _ = editor.open("gone", text: "g(y) <G2>\n")
            daemon.commit()
            store.finishOwnFiles()
            daemon.syncStorage()
            kept = ("kept", try #require(daemon.documents["kept"]?.id))
            gone = ("gone", try #require(daemon.documents["gone"]?.id))
        }
        // A crash after the rename that decides the forgetting, halfway through removing its files;
        // another document's files were half-removed before its rename would never be (the rename
        // comes first), so only the renamed one can be partial.
        let goneDirectory = documents + "/" + DocumentFiles.directoryName(for: gone.id)
        #expect(rename(goneDirectory, goneDirectory + DocumentFiles.unfinishedSuffix) == 0)
        let leftFiles = try FileManager.default.contentsOfDirectory(atPath: goneDirectory + DocumentFiles.unfinishedSuffix)
        if let first = leftFiles.sorted().first { try FileManager.default.removeItem(atPath: goneDirectory + DocumentFiles.unfinishedSuffix + "/" + first) }
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let daemon = PeerTestNetwork().makeDaemon(1_900, store: store)
        #expect(daemon.documents[gone.uri] == nil)
        #expect(daemon.documents[kept.uri]?.text.string == "f(x) <K1>\n")
        #expect(!FileManager.default.fileExists(atPath: goneDirectory + DocumentFiles.unfinishedSuffix), "loading removed what was left")
        #expect(daemon.registry.usage.totals(of: .general).documents == 1)
    }
}
