import Foundation
import JSON
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A project's disk pass looks only at the files marked since the last (`SharedProject.passFiles`)
/// and at every file after a tree change or a scan: whatever changes whether a file may be
/// written must mark it, or the file waits for the next scan (3 s, 15 s when watched). Each test
/// drives the passes by hand (`syncDisk`) and never scans, so a file left for the scan shows.
@Suite(.serialized) struct DiskPassMarkingTests {
    /// The project document of `path` and the project.
    private func projectDocument(_ daemon: Daemon, key: String, path: String) throws -> (SharedProject, SharedDocument) {
        let project = try #require(daemon.projects.project(key: key))
        let file = try #require(project.view.paths.first(where: { $0.value.string == path })?.key, "\(path) in the tree")
        let document = try #require(daemon.documents[project.uri(of: file)], "\(path)'s document")
        return (project, document)
    }

    /// A change of `document` from outside every editor (what a peer's or an undo's would be).
    private func change(_ daemon: Daemon, _ document: SharedDocument, inserting text: String) throws {
        var scratch = document.text
        scratch.replica = ReplicaID(9_191)
        try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array(text.unicodeScalars)), to: document)
    }

    /// A project file open in an editor under another name (opened by its path before the folder
    /// was shared) is held while that editor shows it; once the editor closes it, the next pass
    /// writes the project document's change (before, the hold was remembered per revision and
    /// path, so the file waited for the next scan although the close marked every file).
    @Test func aFileHeldForAnEditorOutsideTheProjectIsWrittenOnceThatEditorClosesIt() throws {
        let (daemon, _) = ProjectFixture.daemon(49_100)
        let root = try ProjectFixture.folder(["notes.md": Array("inside\n".utf8)], name: "pass-outside-open")
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let opened = editor.request("document/open", ["file": .string(root + "/notes.md"), "text": "inside\n"])
        let outsideURI = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        #expect(!outsideURI.hasPrefix("@"), "opened before the share: a document of no project")
        daemon.projects.syncDisk()
        let (_, document) = try projectDocument(daemon, key: key, path: "notes.md")
        #expect(document.uri != outsideURI)

        try change(daemon, document, inserting: "partner ")
        daemon.projects.syncDisk()
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(root + "/notes.md") == "inside\n", "held: an editor shows the file under another name")

        #expect(editor.request("document/close", ["uri": .string(outsideURI)])["error"] == nil)
        daemon.projects.syncDisk()
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(root + "/notes.md") == "partner inside\n", "written once no editor shows it")
    }
}
