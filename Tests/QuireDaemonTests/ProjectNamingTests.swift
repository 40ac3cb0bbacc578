import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// The daemon names a file by the one rule every client used to apply itself: its path from its
/// project root (the nearest directory above it with `.git` or `.quire-root`), else its name.
@Suite struct ProjectNamingTests {
    static func tree() throws -> String {
        let root = DaemonProcess.temporaryDirectory("naming")
        let manager = FileManager.default
        try manager.createDirectory(atPath: root + "/proj/.git", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: root + "/proj/src/deep", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: root + "/marked/sub", withIntermediateDirectories: true)
        manager.createFile(atPath: root + "/marked/.quire-root", contents: Data())
        try manager.createDirectory(atPath: root + "/worktree", withIntermediateDirectories: true)
        manager.createFile(atPath: root + "/worktree/.git", contents: Data("gitdir: elsewhere\n".utf8))   // a git worktree
        try manager.createDirectory(atPath: root + "/loose", withIntermediateDirectories: true)
        return root
    }

    @Test func aFileIsNamedFromItsProjectRoot() throws {
        let root = try Self.tree()
        #expect(ProjectNaming.documentName(ofFile: root + "/proj/src/deep/main.c") == "src/deep/main.c")
        #expect(ProjectNaming.documentName(ofFile: root + "/proj/README") == "README")
        #expect(ProjectNaming.documentName(ofFile: root + "/marked/sub/notes.txt") == "sub/notes.txt")
        #expect(ProjectNaming.documentName(ofFile: root + "/worktree/a.py") == "a.py")
        #expect(ProjectNaming.documentName(ofFile: root + "/loose/plan.txt") == "plan.txt", "outside any project: its own name")
        #expect(ProjectNaming.documentName(ofFile: root + "//proj//src/x.c") == "src/x.c", "empty components count for nothing")
    }

    @Test func anOpenWithAFileAndNoNameIsNamedByTheDaemon() throws {
        let root = try Self.tree()
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let path = root + "/proj/src/deep/main.c"
        let reply = editor.request("document/open", ["file": .string(path), "text": "int main;\n"])
        #expect(reply["result"]?["uri"] == "src/deep/main.c", "\(reply)")
        #expect(daemon.documents["src/deep/main.c"]?.file?.path == path)
        // A second editor naming it itself joins the same document.
        let other = TestEditor(daemon: daemon)
        other.initialize(user: "bob")
        #expect(other.open("src/deep/main.c", text: "")["result"]?["created"] == false)
        #expect(other.string == "int main;\n")
    }

    @Test func anOpenWithNeitherNameNorFileIsRefused() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let reply = editor.request("document/open", ["text": "x"])
        #expect(reply["error"]?["code"] == -32602 && daemon.documents.isEmpty, "\(reply)")
    }
}
