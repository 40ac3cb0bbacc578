import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// `quire/who`: who is here and where, for the clients' who-is-here list, jump and follow: every
/// person whose cursor the daemon knows, this daemon's editors and peers' editors, each with
/// their cursor in every document they are in (most recent first), placed in the asking
/// editor's encoding, with the file the asking daemon has the document bound to.
@Suite struct WhoTests {
    static func cursor(_ editor: TestEditor, in uri: String, line: Int, character: Int, revision: Int = 0) {
        let position: JSONValue = ["line": .integer(Int64(line)), "character": .integer(Int64(character))]
        editor.notify("cursor/update", ["uri": .string(uri), "epoch": 0, "revision": .integer(Int64(revision)),
                                        "selections": [["start": position, "end": position]]])
    }

    static func who(_ editor: TestEditor) -> [JSONValue] {
        editor.request("quire/who")["result"]?["people"]?.arrayValue ?? []
    }

    static func person(_ name: String, in people: [JSONValue]) -> JSONValue? {
        people.first { $0["name"] == .string(name) }
    }

    @Test func twoEditorsOfOneDaemonAreListedWithTheirFileAndLineMostRecentFirst() throws {
        let path = DaemonProcess.temporaryDirectory("who") + "/notes.txt"
        try "one\ntwo\nthree\n".write(toFile: path, atomically: false, encoding: .utf8)
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        #expect(ann.request("document/open", ["uri": "notes.txt", "text": "one\ntwo\nthree\n", "file": .string(path)])["result"] != nil)
        #expect(bob.request("document/open", ["uri": "notes.txt", "text": ""])["result"] != nil)
        #expect(bob.request("document/open", ["uri": "scratch", "text": "a\nb\nc\nd\n"])["result"] != nil)
        #expect(Self.who(ann).isEmpty, "nobody has sent a cursor yet")

        Self.cursor(ann, in: "notes.txt", line: 0, character: 1)
        Self.cursor(bob, in: "notes.txt", line: 2, character: 3)
        Self.cursor(bob, in: "scratch", line: 3, character: 0)
        let people = Self.who(ann)
        #expect(people.compactMap { $0["name"]?.stringValue } == ["ann", "bob"])
        let annSeen = Self.person("ann", in: people), bobSeen = Self.person("bob", in: people)
        #expect(annSeen?["self"] == true && bobSeen?["self"] == false)
        #expect(annSeen?["at"] == [["uri": "notes.txt", "path": .string(path), "line": 0, "character": 1, "session": annSeen?["session"] ?? .null]])
        // Bob's latest cursor (scratch, no file) first, then where he still is in notes.txt.
        let places = bobSeen?["at"]?.arrayValue ?? []
        #expect(places.count == 2)
        #expect(places.first?["uri"] == "scratch" && places.first?["line"] == 3 && places.first?["path"] == nil)
        #expect(places.last?["uri"] == "notes.txt" && places.last?["line"] == 2 && places.last?["character"] == 3)
        #expect(places.last?["path"] == .string(path), "the file the daemon has notes.txt bound to")
        #expect(bobSeen?["session"] == places.first?["session"])

        // He moves back to notes.txt: it comes first now. Then he closes it: it is gone.
        Self.cursor(bob, in: "notes.txt", line: 1, character: 0)
        var bobPlaces = Self.person("bob", in: Self.who(ann))?["at"]?.arrayValue ?? []
        #expect(bobPlaces.map { $0["uri"] } == ["notes.txt", "scratch"])
        #expect(bobPlaces.first?["line"] == 1)
        bob.request("document/close", ["uri": "notes.txt"])
        bobPlaces = Self.person("bob", in: Self.who(ann))?["at"]?.arrayValue ?? []
        #expect(bobPlaces.map { $0["uri"] } == ["scratch"])
    }

    @Test func namesAreShownCleaned() throws {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: " b\u{1B}[2Jo\u{202E}b\n ")
        ann.open("doc", text: "x\n")
        bob.open("doc", text: "")
        Self.cursor(bob, in: "doc", line: 0, character: 1)
        #expect(Self.who(ann).compactMap { $0["name"]?.stringValue } == ["b[2Job"],
                "control and format characters dropped, spaces trimmed")
    }

    @Test func positionsAreInTheAskingEditorsEncodingAndText() throws {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon), cy = TestEditor(daemon: daemon)
        ann.initialize(user: "ann", encodings: ["utf-8"])
        bob.initialize(user: "bob", encodings: ["utf-16"])
        cy.initialize(user: "cy", encodings: ["utf-32"])
        ann.open("doc", text: "é😀x\n")
        bob.open("doc", text: "")
        // Bob's cursor before "x": 3 UTF-16 code units in.
        Self.cursor(bob, in: "doc", line: 0, character: 3)
        #expect(Self.person("bob", in: Self.who(ann))?["at"]?.arrayValue?.first?["character"] == 6, "UTF-8 bytes for Ann")
        #expect(Self.person("bob", in: Self.who(bob))?["at"]?.arrayValue?.first?["character"] == 3, "UTF-16 for Bob")
        // Cy has not opened "doc": placed in the document's text, in code points.
        #expect(Self.person("bob", in: Self.who(cy))?["at"]?.arrayValue?.first?["character"] == 2)
        #expect(Self.person("bob", in: Self.who(cy))?["self"] == false)
        #expect(Self.person("bob", in: Self.who(bob))?["self"] == true)
    }

    @Test func peersEditorsAreListedWhereTheirCursorIsInTheAskersText() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: "hello\nworld\n")
        try net.link(a, b)
        net.pump([a, b])
        let cy = TestEditor(daemon: b)
        cy.initialize(user: "cy")
        cy.open("notes", text: "")
        #expect(cy.string == "hello\nworld\n")
        Self.cursor(ann, in: "notes", line: 1, character: 2)
        net.pump([a, b])
        let annSeen = Self.person("ann", in: Self.who(cy))
        #expect(annSeen?["self"] == false)
        #expect(annSeen?["at"]?.arrayValue?.first?["uri"] == "notes" && annSeen?["at"]?.arrayValue?.first?["line"] == 1 && annSeen?["at"]?.arrayValue?.first?["character"] == 2)
        // The number is the one Cy's cursor/update knew Ann by.
        let update = cy.take("cursor/update").last?["params"]
        #expect(update?["session"] != nil && annSeen?["session"] == update?["session"])
        // Cy types a line above Ann's cursor: who places her in Cy's text.
        cy.edit(0..<0, with: "new\n")
        #expect(Self.person("ann", in: Self.who(cy))?["at"]?.arrayValue?.first?["line"] == 2)
        // Ann leaves: she is no longer listed.
        ann.request("document/close", ["uri": "notes"])
        net.pump([a, b])
        #expect(Self.person("ann", in: Self.who(cy)) == nil)
    }
}
