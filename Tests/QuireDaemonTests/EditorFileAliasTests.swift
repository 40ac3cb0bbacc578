import Foundation
import JSON
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import Testing

/// An editor that names a project file by another path to it (through a link to the project
/// folder, or with `..` in it) opens the project's document (the daemon resolves the path to
/// name it), so its reads and saves must go through the project's walk from the opened root as
/// those by the plain path do: a folder on the file's path swapped for a link afterwards is
/// neither written through on save nor read on open.
@Suite(.serialized) struct EditorFileAliasTests {
    /// Shares a project whose `sub/notes.md` says "inside", and a private folder whose
    /// `sub/notes.md` says something else; the editor opens the file by `alias(root)`; then
    /// `sub` is replaced by a link to the private `sub`; then the editor saves.
    private func saveAfterSwap(port: UInt64, name: String, alias: (String) throws -> String) throws {
        let (daemon, _) = ProjectFixture.daemon(port)
        let outside = try ProjectFixture.folder(["sub/notes.md": Array("outside\n".utf8)], name: name + "-outside")
        let root = try ProjectFixture.folder(["sub/notes.md": Array("inside\n".utf8)], name: name)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let projectURI = project.uri(of: try #require(project.view.files[try ProjectPath("sub/notes.md")]))
        let opened = editor.request("document/open", ["file": .string(try alias(root) + "/sub/notes.md"), "text": "inside\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        #expect(uri == projectURI, "the alias names the project's document")
        try FileManager.default.moveItem(atPath: root + "/sub", toPath: root + "/sub-moved")
        #expect(symlink(outside + "/sub", root + "/sub") == 0)
        let saved = editor.request("document/save", ["uri": .string(uri)])
        #expect(saved["error"] != nil, "\(saved)")
        #expect(ProjectFixture.read(outside + "/sub/notes.md") == "outside\n", "nothing written behind the link")
        #expect(daemon.document(uri)?.text.string == "inside\n", "the file behind the link is not read in")
    }

    @Test func aSaveByAPathThroughALinkToTheRootIsNotWrittenThroughALinkPlantedLater() throws {
        try saveAfterSwap(port: 48_800, name: "alias-link") { root in
            let link = NSTemporaryDirectory() + "quire-alias-\(UUID().uuidString)"
            #expect(symlink(root, link) == 0)
            return link
        }
    }

    @Test func aSaveByAPathWithDotDotIsNotWrittenThroughALinkPlantedLater() throws {
        try saveAfterSwap(port: 48_810, name: "alias-dots") { root in
            try FileManager.default.createDirectory(atPath: root + "/other", withIntermediateDirectories: true)
            return root + "/other/.."
        }
    }
}
