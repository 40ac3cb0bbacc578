import Foundation
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// A partner's file named to pass for another (a bidirectional override making `txt.exe` read
/// `exe.txt`, a C1 control such as U+009B that starts an escape sequence in some terminals, a
/// line separator) stays a document: the project's tree has it, but no daemon makes that name
/// on its disk because of a peer. A plain name from the same partner is written as always.
@Suite(.serialized) struct MisleadingNameTests {
    @Test func aPartnersMisleadingFileNamesAreNotMadeOnDisk() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "misleading")
        let log = LogCapture()
        let pair = try JoinedPair(root: root, name: "misleading", ports: (48_860, 48_870), hostLog: log)
        let (net, host, joiner, key, directory) = (pair.net, pair.host, pair.joiner, pair.key, pair.copy)
        let names = ["invoice\u{202E}txt.exe", "esc\u{9B}31m.txt", "line\u{2028}break.txt"]
        for name in names { try ProjectFixture.write(Array("payload\n".utf8), to: directory + "/" + name) }
        try ProjectFixture.write(Array("plain\n".utf8), to: directory + "/plain.txt")
        for project in joiner.projects.projects.values { project.needsScan = true }
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(root + "/plain.txt") == "plain\n" })
        let hostProject = try #require(host.projects.project(key: key))
        for name in names {
            #expect(hostProject.view.files[try ProjectPath(name)] != nil, "the tree has \(name.debugDescription)")
            #expect(!FileManager.default.fileExists(atPath: root + "/" + name), "\(name.debugDescription) is not made on the host's disk")
        }
        #expect(log.all.contains { $0.contains("not written: its name holds a character that reorders") }, "\(log.all.suffix(5))")
        _ = pair
    }

    /// A join line's project name is the default folder's name: one that would pass for another
    /// is not made by default, the partner names the folder.
    @Test func aJoinLinesMisleadingNameIsNotMadeAFolderByDefault() throws {
        let (daemon, _) = ProjectFixture.daemon(48_875)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let line = try JoinLine(name: "notes\u{202E}txt.sh", addresses: [try PeerAddress("127.0.0.1:9")], secret: Array(repeating: 3, count: 32),
                                fingerprint: Array(repeating: 4, count: JoinLine.fingerprintBytes)).encoded
        let reply = editor.request("project/join", ["line": .string(line)])
        let message = try #require(reply["error"]?["message"]?.stringValue, "\(reply)")
        #expect(message.contains("reorders how it is shown") && message.contains("give params.directory"), "\(message)")
        #expect(daemon.projects.projects.isEmpty)
        let directory = DaemonProcess.temporaryDirectory("misleading-named") + "/notes"
        #expect(editor.request("project/join", ["line": .string(line), "directory": .string(directory)])["result"]?["directory"]?.stringValue == directory)
    }
}
