import Foundation
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// A partner's files never make a git repository on this machine's disk, nor change one there
/// (`ProjectWriter`'s rule 5):
/// git obeys a repository's `config` (`core.fsmonitor` names a command it runs) wherever a person
/// or a shell prompt runs git, and a folder holding `HEAD`, `objects/` and `refs/` is one. The
/// files stay documents, shared with everyone else; ordinary files named `HEAD` are written.
@Suite(.serialized) struct GitFolderHoldTests {
    private static let config = Array("[core]\n\tfsmonitor = \"touch /tmp/quire-pwned\"\n".utf8)

    /// A host sharing `files` and `a.txt`, and a joiner of it, linked (`JoinedPair`).
    private func joined(_ files: [String: [UInt8]], name: String, port: UInt64, log: LogCapture) throws -> JoinedPair {
        let root = try ProjectFixture.folder(files.merging(["a.txt": Array("a\n".utf8)]) { $1 }, name: name)
        return try JoinedPair(root: root, name: name, ports: (port, port + 10), hostLog: log, joinerLog: log)
    }

    @Test func aPartnersBareRepositoryIsNotMadeOnTheHostsDisk() throws {
        let log = LogCapture()
        let pair = try joined([:], name: "git-bare", port: 48_880, log: log)
        let (net, host, joiner, root) = (pair.net, pair.host, pair.joiner, pair.root)
        let files = ["evil/HEAD": Array("ref: refs/heads/main\n".utf8), "evil/config": Self.config,
                     "evil/objects/info/packs": Array("\n".utf8), "evil/refs/heads/main": Array(String(repeating: "ab", count: 20).utf8 + [0x0A]),
                     "detached/HEAD": Array((String(repeating: "0f", count: 20) + "\n").utf8), "detached/objects/x": Array("x\n".utf8),
                     "detached/refs/x": Array("x\n".utf8), "plain.txt": Array("plain\n".utf8)]
        try pair.writeOnJoiner(files)
        let project = try #require(host.projects.projects.values.first)
        #expect(ProjectPeerTests.settle(net, [host, joiner]) {
            ProjectFixture.read(root + "/plain.txt") == "plain\n" && ProjectFixture.read(root + "/detached/refs/x") == "x\n"
                && ProjectFixture.read(root + "/evil/refs/heads/main") != nil && ProjectFixture.read(root + "/evil/config") != nil
                && files.keys.allSatisfy { path in (try? ProjectPath(path)).map { project.view.files[$0] != nil } ?? false }
        }, "every file is in the host's tree, and all but the HEADs on its disk")
        for path in ["evil/HEAD", "detached/HEAD"] {
            #expect(!FileManager.default.fileExists(atPath: root + "/" + path), "\(path) is not made on the host's disk")
            #expect(log.all.contains { $0.contains("\(path) not written: it would make or change a version-control repository") }, "\(log.all.suffix(5))")
        }
        for folder in ["evil", "detached"] {
            #expect(GitCheck.takesForRepository(root + "/" + folder) != true, "git does not take \(folder) for a repository")
        }
        _ = pair
    }

    /// A repository the person keeps in the project (a test fixture, say): a partner's change to
    /// its `config` does not reach the disk. On a joiner, a host's repository is not made.
    @Test func aRepositoryInTheProjectIsNeitherChangedNorCopiedByAPartner() throws {
        let log = LogCapture()
        let fixture = ["fixture.git/HEAD": Array("ref:  refs/heads/main\n".utf8), "fixture.git/config": Array("[core]\n\tbare = true\n".utf8),
                       "fixture.git/objects/info/packs": Array("\n".utf8), "fixture.git/refs/heads/main": Array("x\n".utf8)]
        let pair = try joined(fixture, name: "git-fixture", port: 48_900, log: log)
        let (net, host, joiner, root, copy) = (pair.net, pair.host, pair.joiner, pair.root, pair.copy)
        #expect(GitCheck.takesForRepository(root + "/fixture.git") != false, "git takes the host's fixture for a repository")
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(copy + "/fixture.git/config") != nil })
        #expect(!FileManager.default.fileExists(atPath: copy + "/fixture.git/HEAD"), "the host's HEAD is not made on the joiner's disk")
        #expect(GitCheck.takesForRepository(copy + "/fixture.git") != true, "so git takes no folder of the joiner's for a repository")
        // The joiner's person changes the repository's config through their editor.
        let joined = try #require(joiner.projects.projects.values.first)
        let joinedConfig = try #require(joined.view.files[try ProjectPath("fixture.git/config")])
        let editor = pair.joinerEditor
        editor.open(joined.uri(of: joinedConfig), text: "")
        #expect(editor.string == "[core]\n\tbare = true\n")
        editor.edit(editor.text.count..<editor.text.count, with: "\tfsmonitor = \"touch /tmp/quire-pwned\"\n")
        try pair.writeOnJoiner(["plain.txt": Array("plain\n".utf8)])
        let project = try #require(host.projects.projects.values.first)
        let config = try #require(project.view.files[try ProjectPath("fixture.git/config")])
        #expect(ProjectPeerTests.settle(net, [host, joiner]) {
            ProjectFixture.read(root + "/plain.txt") == "plain\n"
                && host.registry.document(project.uri(of: config))?.text.string.contains("fsmonitor") == true
        }, "the partner's change is in the host's document")
        #expect(ProjectPeerTests.settle(net, [host, joiner]) {
            log.all.contains { $0.contains("fixture.git/config not written: it would make or change a version-control repository") }
        }, "\(log.all.suffix(5))")
        #expect(ProjectFixture.read(root + "/fixture.git/config") == "[core]\n\tbare = true\n", "but not on its disk")
        _ = pair
    }

    /// Files named `HEAD` that git would not take for a repository's, and the files beside them,
    /// are written as any other.
    @Test func anOrdinaryFileNamedHeadIsWritten() throws {
        let log = LogCapture()
        let pair = try joined([:], name: "git-ordinary", port: 48_920, log: log)
        let (net, host, joiner, root) = (pair.net, pair.host, pair.joiner, pair.root)
        let files = ["notes/HEAD": Array("# Heading <A17>\n".utf8), "notes/config": Array("f(x)\n".utf8),
                     "bom/HEAD": Array([0xEF, 0xBB, 0xBF] + "ref: refs/heads/main\n".utf8), "short/HEAD": Array("0f0f\n".utf8)]
        try pair.writeOnJoiner(files)
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { files.allSatisfy { FileManager.default.contents(atPath: root + "/" + $0.key).map(Array.init) == $0.value } },
                "\(log.all.suffix(5))")
        _ = pair
    }
}
