import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProject
import QuireTestSupport

/// A share reads every file and makes its document from it; the first disk pass after it has
/// nothing to compare for those files (their documents write back the very bytes read), so it no
/// longer re-encodes, re-checks and re-binds the whole project while a partner's join waits for
/// the event loop. A later change still reaches the disk in the file's own format.
@Suite struct ShareFirstPassTests {
    @Test func aSharesFirstPassPlansNoneOfTheFilesItJustReadAndLaterEditsAreWritten() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let root = try ProjectFixture.folder([
            "src/a.swift": Array("let <A17> = f(x)\n".utf8),
            "win.txt": Array("s = \"s\"\r\ng(y)\r\n".utf8),
            "bom.md": bom + Array("# <B2>\n".utf8),
            "no-final-break.txt": Array("h(z)".utf8),
        ], name: "firstpass")
        let (host, _) = ProjectFixture.daemon(2_100)
        let editor = TestEditor(daemon: host)
        editor.initialize(user: "ann")
        let shared = try #require(editor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let project = try #require(host.projects.project(key: key))
        host.projects.syncDisk()
        #expect(project.lastPassLooked == 4, "the first pass looks at every file of the tree")
        #expect(project.lastPassWanted == 0, "but plans none of the files the share just read")

        // A change to one of them is written by the next pass, CRLF kept.
        let opened = editor.request("document/open", ["file": .string(root + "/win.txt"), "text": "s = \"s\"\ng(y)\n"])
        editor.uri = try #require(opened["result"]?["uri"]?.stringValue)
        editor.text = Array("s = \"s\"\ng(y)\n".unicodeScalars)
        _ = editor.edit(0..<0, with: "f(x)\n")
        #expect(editor.request("document/close", ["uri": .string(editor.uri)])["error"] == nil)
        host.projects.syncDisk()
        #expect(project.lastPassWanted == 1)
        #expect(ProjectFixture.read(root + "/win.txt") == "f(x)\r\ns = \"s\"\r\ng(y)\r\n")
        #expect(ProjectFixture.read(root + "/bom.md").map { Array($0.utf8) } == bom + Array("# <B2>\n".utf8))
    }
}
