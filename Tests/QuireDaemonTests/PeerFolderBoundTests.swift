import Foundation
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// The folders a daemon makes for a partner's files are bounded like the files' bytes: each new
/// folder takes a block and an inode whatever the file holds, so a partner's small files in deep,
/// distinct folders (63 new folders a file) could fill the disk far past `totalBytes`. A file
/// whose folders would take the project past `diskLimits.files` folders stays a document; one
/// in folders already made is written.
@Suite(.serialized) struct PeerFolderBoundTests {
    @Test func aPartnersFilesMakeNoMoreFoldersThanTheBound() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "folder-bound")
        let net = PeerTestNetwork()
        let log = LogCapture()
        let host = net.makeDaemon(48_880, log: log), joiner = net.makeDaemon(48_890)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        host.projects.diskLimits.files = 8
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "mallory")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("folder-bound-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/a.txt") == "a\n" })
        // 4 folders for each file's folder: two of them fit the bound of 8, the third does not.
        let names = ["deep1/a/b/c/f.txt", "deep2/a/b/c/f.txt", "deep3/a/b/c/f.txt"]
        for name in names { try ProjectFixture.write(Array("\(name)\n".utf8), to: directory + "/" + name) }
        for project in joiner.projects.projects.values { project.needsScan = true }
        let hostProject = try #require(host.projects.project(key: key))
        func written() -> [String] { names.filter { ProjectFixture.read(root + "/" + $0) != nil } }
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { hostProject.view.paths.count == 4 && written().count == 2 }, "\(written()) \(log.all.suffix(5))")
        net.pump([host, joiner])
        host.projects.syncDisk()
        #expect(written().count == 2, "\(written())")
        let folders = FileManager.default.enumerator(atPath: root)?.allObjects.compactMap { $0 as? String }.filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder) && isFolder.boolValue
        } ?? []
        #expect(folders.count == 8, "\(folders.sorted())")
        let held = try #require(names.first { !written().contains($0) })
        #expect(log.all.contains { $0.contains("\(held) not written: its folders would take the project past 8 folders") }, "\(log.all.suffix(5))")
        // A file in folders already made is written.
        let inside = (try #require(written().first) as NSString).deletingLastPathComponent + "/g.txt"
        try ProjectFixture.write(Array("g\n".utf8), to: directory + "/" + inside)
        for project in joiner.projects.projects.values { project.needsScan = true }
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(root + "/" + inside) == "g\n" })
        _ = wire
    }
}
