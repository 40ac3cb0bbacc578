import Foundation
import JSON
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import Testing

/// A file opened by another path to it (through a link to the folder, or with `..`) before its
/// folder was shared is a document of no project, bound by that path. When the folder is shared,
/// the document is bound to the project's own path, so its saves go through the project's walk
/// from the opened root (a folder on the way swapped for a link is not written through), and the
/// writer holds it as a buffer open in an editor.
@Suite(.serialized) struct AliasBeforeShareTests {
    private func openThenShare(base: UInt64, name: String, alias: (String) throws -> String) throws {
        let (daemon, _) = ProjectFixture.daemon(base)
        let outside = try ProjectFixture.folder(["sub/notes.md": Array("outside\n".utf8)], name: name + "-outside")
        let root = try ProjectFixture.folder(["sub/notes.md": Array("inside\n".utf8)], name: name)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let opened = editor.request("document/open", ["file": .string(try alias(root) + "/sub/notes.md"), "text": "inside\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        let shared = ProjectFixture.share(daemon, root: root, editor: editor)
        #expect(shared["result"]?["key"]?.stringValue != nil, "\(shared)")
        #expect(daemon.document(uri)?.file?.path == root + "/sub/notes.md", "bound by the project's own path")
        try FileManager.default.moveItem(atPath: root + "/sub", toPath: root + "/sub-moved")
        #expect(symlink(outside + "/sub", root + "/sub") == 0)
        let saved = editor.request("document/save", ["uri": .string(uri)])
        #expect(saved["error"] != nil, "\(saved)")
        #expect(ProjectFixture.read(outside + "/sub/notes.md") == "outside\n", "nothing written behind the link")
        #expect(daemon.document(uri)?.text.string == "inside\n", "the file behind the link is not read in")
    }

    @Test func aFileOpenedThroughALinkToItsFolderIsSavedThroughTheWalkOnceShared() throws {
        try openThenShare(base: 48_820, name: "alias-before-link") { root in
            let link = NSTemporaryDirectory() + "quire-alias-before-\(UUID().uuidString)"
            #expect(symlink(root, link) == 0)
            return link
        }
    }

    @Test func aFileOpenedWithDotDotIsSavedThroughTheWalkOnceShared() throws {
        try openThenShare(base: 48_830, name: "alias-before-dots") { root in
            try FileManager.default.createDirectory(atPath: root + "/other", withIntermediateDirectories: true)
            return root + "/other/.."
        }
    }
}
