import Foundation
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport

/// A partner that holds the project's secret makes files at paths the host's ignore files leave
/// out (`.env`, a folder `secrets/`): ignored paths are outside the share in both directions, so
/// the host neither writes the partner's document there nor binds its own ignored file (its
/// secret) to the partner's document when an editor opens it, even when the person picks "merge".
@Suite struct IgnoredPathPeerTests {
    @Test func aPartnersFileAtAnIgnoredPathIsNeitherWrittenNorJoinedByTheHostsOwnFile() throws {
        let root = try ProjectFixture.folder([
            ".gitignore": Array(".env\nsecrets/\n".utf8), ".env": Array("TOKEN=secret\n".utf8), "a.txt": Array("a\n".utf8),
        ], name: "ignored-paths")
        let pair = try JoinedPair(root: root, name: "ignored", ports: (2600, 2700))
        let (net, host, joiner, hostEditor, key, directory) = (pair.net, pair.host, pair.joiner, pair.hostEditor, pair.key, pair.copy)
        // The partner's program empties its copy of the ignore file and makes the two files.
        try ProjectFixture.write([], to: directory + "/.gitignore")
        try ProjectFixture.write(Array("TOKEN=partner\n".utf8), to: directory + "/.env")
        try ProjectFixture.write(Array("theirs\n".utf8), to: directory + "/secrets/key.txt")
        for project in joiner.projects.projects.values { project.needsScan = true }
        let hostProject = try #require(host.projects.project(key: key))
        let env = try ProjectPath(".env"), planted = try ProjectPath("secrets/key.txt")
        #expect(ProjectPeerTests.settle(net, [host, joiner]) {
            hostProject.view.files[env] != nil && hostProject.view.files[planted] != nil
                && host.document(hostProject.uri(of: hostProject.view.files[planted]!)) != nil
        })
        _ = ProjectPeerTests.settle(net, [host, joiner]) { false }
        host.projects.syncDisk()
        #expect(!FileManager.default.fileExists(atPath: root + "/secrets"), "nothing written at an ignored path")
        #expect(ProjectFixture.read(root + "/.env") == "TOKEN=secret\n")

        // The owner opens their own `.env` and, asked, even picks "merge".
        let partnersURI = hostProject.uri(of: try #require(hostProject.view.files[env]))
        let opened = hostEditor.request("document/open", ["file": .string(root + "/.env"), "text": "TOKEN=secret\n", "conflict": "merge"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        #expect(uri != partnersURI, "the owner's ignored file is not the partner's document")
        #expect(!uri.hasPrefix("@"), "not a document of the project")
        #expect(host.document(partnersURI)?.text.string.contains("secret") == false)
        let told = hostEditor.take("window/showMessage").compactMap { $0["params"]?["message"]?.stringValue }
        #expect(told.contains { $0.contains(".env is ignored by the project ignored-paths") }, "\(told)")
        // Opening with `ifShared` (a client joining by opening a file) is not shared either.
        let ifShared = hostEditor.request("document/open", ["file": .string(root + "/secrets/key.txt"), "text": "", "ifShared": true])
        #expect(ifShared["result"]?["shared"] == .bool(false), "\(ifShared)")
        _ = ProjectPeerTests.settle(net, [host, joiner]) { false }
        #expect(ProjectFixture.read(directory + "/.env") == "TOKEN=partner\n", "the secret never reached the partner")
        _ = pair
    }
}
