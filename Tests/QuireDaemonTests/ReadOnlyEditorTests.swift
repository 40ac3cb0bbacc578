import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// The editors of a daemon whose role in a project is `read` (protocol/decisions/roles.md,
/// *Enforcement*): every way an editor changes a document of the project is refused with
/// -32019 and changes nothing; `document/open` says `readOnly`; a role change tells each open
/// view whose writability changed (`document/readOnly`), and editing works again after a
/// change to `write`.
@Suite struct ReadOnlyEditorTests {
    /// A daemon with project K's secret, whose role there is `access.own[key]`.
    final class Reader {
        let daemon = PeerTestNetwork().makeDaemon(100, secret: nil)
        let access = FakeProjectAccess()
        let key: String
        var uri: String { DocumentScope.projectURI(key: key, file: "f-1") }

        init() throws {
            let (secret, key) = try ScopedSharingTests.project()
            self.key = key
            try daemon.addPeerSecret(secret, scope: .project(key: key))
            access.own[key] = .write
            daemon.projectAccess = access
        }

        func setRole(_ role: ProjectRole) {
            access.own[key] = role
            daemon.projectRolesChanged(key: key)
        }

        var text: String? { daemon.document(uri)?.text.string }
    }

    static func code(_ reply: JSONValue) -> Int64? { reply["error"]?["code"]?.integerValue }

    @Test func everyEditOfAReadDaemonIsRefusedAndChangesNothing() throws {
        let reader = try Reader()
        let ann = TestEditor(daemon: reader.daemon)
        ann.initialize(user: "ann")
        ann.open(reader.uri, text: "shared text\n")
        ann.edit(0..<0, with: "mine ")              // written while the role allowed it: an undo step
        reader.setRole(.read)
        let told = ann.take("document/readOnly")
        #expect(told.count == 1 && told.first?["params"]?["readOnly"] == true && told.first?["params"]?["uri"] == .string(reader.uri),
                "\(told)")
        #expect(told.first?["params"]?["reason"]?.stringValue == "you can read \(reader.key) but not change it (role read)")
        #expect(told.first?["params"]?["role"] == "read" && told.first?["params"]?["project"] == .string(reader.key))
        let before = reader.text

        let refused = ann.edit(0..<0, with: "x")
        #expect(Self.code(refused) == Int64(ResponseError.readOnlyCode), "\(refused)")
        #expect(refused["error"]?["data"]?["role"] == "read" && refused["error"]?["data"]?["key"] == .string(reader.key))
        #expect(refused["error"]?["message"]?.stringValue?.contains("you can read \(reader.key) but not change it (role read)") == true)
        for method in ["document/undo", "document/redo"] {
            #expect(Self.code(ann.request(method, ["uri": .string(reader.uri)])) == Int64(ResponseError.readOnlyCode), "\(method)")
        }
        let other = TestEditor(daemon: reader.daemon)
        other.initialize(user: "bob")
        other.open("notes", text: "a general document\n")
        #expect(Self.code(ann.request("document/merge", ["uri": .string(reader.uri), "from": "notes"])) == Int64(ResponseError.readOnlyCode))
        let resync = ann.request("document/resync", ["uri": .string(reader.uri), "text": "typed anyway\n",
                                                     "epoch": .integer(Int64(ann.epoch)), "revision": .integer(Int64(ann.daemonRevision))])
        #expect(Self.code(resync) == Int64(ResponseError.readOnlyCode), "\(resync)")
        #expect(reader.text == before, "nothing changed: \(reader.text ?? "nil")")

        // A plain resync (the client's way back to the shared text) works, and starts a new epoch.
        let plain = ann.request("document/resync", ["uri": .string(reader.uri)])
        #expect(plain["result"]?["text"] == .string(before ?? "") && plain["result"]?["epoch"] == .integer(Int64(ann.epoch + 1)))

        // A new open says so; one that would create a project document with text is refused.
        let bob = TestEditor(daemon: reader.daemon)
        bob.initialize(user: "bob")
        let opened = bob.open(reader.uri, text: before ?? "")
        #expect(opened["result"]?["readOnly"] == true, "\(opened)")
        #expect(opened["result"]?["readOnlyReason"]?.stringValue == "you can read \(reader.key) but not change it (role read)")
        let fresh = DocumentScope.projectURI(key: reader.key, file: "f-2")
        #expect(Self.code(TestEditor(daemon: reader.daemon).initializedThen { $0.open(fresh, text: "new text\n") }) == Int64(ResponseError.readOnlyCode))
        #expect(reader.daemon.document(fresh) == nil)
        // A general document stays writable.
        #expect(other.edit(0..<0, with: "ok ")["result"] != nil)
        #expect(other.take("document/readOnly").isEmpty && ann.take("document/readOnly").isEmpty, "nothing else changed")
    }

    @Test func aRefusedNotificationIsToldOncePerEpoch() throws {
        let reader = try Reader()
        let ann = TestEditor(daemon: reader.daemon)
        ann.initialize(user: "ann")
        ann.open(reader.uri, text: "shared text\n")
        reader.setRole(.read)
        for offset in 0..<5 { _ = ann.edit(offset..<offset, with: "k", asRequest: false) }
        var refused = ann.take("document/editRefused")
        #expect(refused.count == 1, "once, not per keystroke: \(refused)")
        #expect(refused.first?["params"]?["error"]?["code"] == .integer(Int64(ResponseError.readOnlyCode)))
        #expect(reader.text == "shared text\n")
        // A new epoch (the client resynced) may be told again, once.
        let plain = ann.request("document/resync", ["uri": .string(reader.uri)])
        ann.epoch = Int(plain["result"]?["epoch"]?.integerValue ?? 0)
        ann.text = Array("shared text\n".unicodeScalars)
        (ann.editorRevision, ann.daemonRevision) = (0, 0)
        for _ in 0..<3 { _ = ann.edit(0..<0, with: "k", asRequest: false) }
        refused = ann.take("document/editRefused")
        #expect(refused.count == 1 && refused.first?["params"]?["epoch"] == .integer(Int64(ann.epoch)), "\(refused)")
    }

    @Test func aChangeToWriteLetsTheEditorEditAgain() throws {
        let reader = try Reader()
        reader.setRole(.read)
        // The document exists (a writer made it): created while this daemon could write, say.
        reader.access.own[reader.key] = .write
        let maker = TestEditor(daemon: reader.daemon)
        maker.initialize(user: "maker")
        maker.open(reader.uri, text: "shared text\n")
        reader.setRole(.read)
        _ = maker.take("document/readOnly")

        let ann = TestEditor(daemon: reader.daemon)
        ann.initialize(user: "ann")
        #expect(ann.open(reader.uri, text: "shared text\n")["result"]?["readOnly"] == true)
        #expect(Self.code(ann.edit(0..<0, with: "x")) == Int64(ResponseError.readOnlyCode))
        ann.text = Array("shared text\n".unicodeScalars)
        ann.editorRevision -= 1

        reader.setRole(.write)
        for editor in [ann, maker] {
            let told = editor.take("document/readOnly")
            #expect(told.count == 1 && told.first?["params"]?["readOnly"] == false, "\(told)")
            #expect(told.first?["params"]?["reason"]?.stringValue == "you can change \(reader.key) again (role write)")
        }
        // The refused edit's epoch stays refused (the editor showed it): a resync, then edits go in.
        #expect(Self.code(ann.edit(0..<0, with: "y")) == Int64(ResponseError.resyncNeededCode))
        let plain = ann.request("document/resync", ["uri": .string(reader.uri)])
        ann.epoch = Int(plain["result"]?["epoch"]?.integerValue ?? 0)
        ann.text = Array((plain["result"]?["text"]?.stringValue ?? "").unicodeScalars)
        (ann.editorRevision, ann.daemonRevision) = (0, 0)
        #expect(ann.edit(0..<0, with: "again ")["result"] != nil)
        #expect(reader.text == "again shared text\n")
        // An open now says nothing of read-only; the same role again tells nobody.
        let bob = TestEditor(daemon: reader.daemon)
        bob.initialize(user: "bob")
        #expect(bob.open(reader.uri, text: "again shared text\n")["result"]?["readOnly"] == nil)
        reader.setRole(.owner)
        #expect(ann.take("document/readOnly").isEmpty && bob.take("document/readOnly").isEmpty)
    }
}

extension TestEditor {
    /// Initializes this editor, then returns what `body` returns.
    func initializedThen(_ body: (TestEditor) -> JSONValue) -> JSONValue {
        initialize(user: "someone")
        return body(self)
    }
}
