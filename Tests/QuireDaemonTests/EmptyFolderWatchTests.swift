import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProject
import QuireTestSupport

/// A folder of the project that held no file when it was scanned (a `gen/` emptied by a clean)
/// is watched too: a file made in it later is seen at once, not at the next rescan 15 s on.
@Suite struct EmptyFolderWatchTests {
    @Test func aFileMadeInAFolderThatWasEmptyIsSeenByTheWatch() throws {
        let root = try ProjectFixture.folder(["keep.swift": Array("f(x)\n".utf8)], name: "emptyfolder")
        try FileManager.default.createDirectory(atPath: root + "/gen/deep", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/build", withIntermediateDirectories: true)
        try ProjectFixture.write(Array("build/\n".utf8), to: root + "/.gitignore")
        let (host, _) = ProjectFixture.daemon(2_200)
        let editor = TestEditor(daemon: host)
        editor.initialize(user: "ann")
        let shared = try #require(editor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let project = try #require(host.projects.project(key: key))
        let watcher = try #require(project.watcher)
        _ = watcher.takeEvents()
        try ProjectFixture.write(Array("let <G1> = g(\"s\")\n".utf8), to: root + "/gen/deep/out.swift")
        #expect(watcher.takeEvents() == true, "the new file in the folder that was empty is seen")
        // An ignored folder is not watched (nor walked).
        try ProjectFixture.write(Array("x\n".utf8), to: root + "/build/a.o")
        #expect(watcher.takeEvents() == false, "a file in an ignored folder is no change")
    }
}
