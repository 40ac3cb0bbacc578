import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// Documents bound to files: changes made outside Quire are merged as edits, saving is atomic,
/// an editor's own save is not mistaken for an outside change, and the binding survives restarts.
@Suite struct FileBindingTests {
    static func file(_ content: String) throws -> String {
        let path = DaemonProcess.temporaryDirectory("bound") + "/notes.txt"
        try content.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    static func openBound(_ editor: TestEditor, _ path: String, text: String) -> JSONValue {
        editor.uri = "doc"
        editor.text = Array(text.unicodeScalars)
        let reply = editor.request("document/open", ["uri": "doc", "text": .string(text), "file": .string(path)])
        for change in reply["result"]?["changes"]?.arrayValue ?? [] { editor.apply(change) }
        return reply
    }

    /// An editor on `daemon` with "doc" open and bound to the file at `path`, showing `text`.
    static func boundEditor(_ path: String, text: String, on daemon: Daemon) -> TestEditor {
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        _ = openBound(editor, path, text: text)
        return editor
    }

    @Test func anOutsideChangeIsMergedNotOverwritten() throws {
        let path = try Self.file("one\ntwo\n")
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        #expect(Self.openBound(ann, path, text: "one\ntwo\n")["result"] != nil)
        ann.edit(0..<0, with: "zero\n")
        try "one\ntwo\nthree\n".write(toFile: path, atomically: false, encoding: .utf8)
        // The next open notices the change and merges it: neither side is overwritten.
        let bob = TestEditor(daemon: daemon)
        bob.initialize(user: "bob")
        bob.open("doc", text: "")
        #expect(bob.string == "zero\none\ntwo\nthree\n")
        ann.deliver()
        #expect(ann.string == bob.string)
        let saved = ann.request("document/save", ["uri": "doc"])["result"]
        #expect(saved?["importedEdits"] == 0)
        #expect(saved?["path"]?.stringValue == path)
        #expect(Self.read(path) == "zero\none\ntwo\nthree\n")
    }

    /// A save replaces the file with a new one, which the kernel gives the user's primary
    /// group: a file kept `0660` for another group (`chgrp team notes.txt`) became readable and
    /// writable by the user's primary group instead (`users` on many systems: everyone). The
    /// save keeps the file's group (as Vim does), and never keeps set-user or set-group bits.
    /// Needs root to give the file a group of another (`nobody`'s, 65534).
    @Test(.enabled(if: geteuid() == 0)) func savingKeepsTheFilesGroupAndDropsSetIDBits() throws {
        let path = try Self.file("<A17>\n")
        #expect(chown(path, getuid(), 65534) == 0 && chmod(path, 0o6660) == 0)
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "<A17>\n", on: daemon)
        ann.edit(6..<6, with: "f(x)\n")
        #expect(ann.request("document/save", ["uri": "doc"])["result"] != nil)
        #expect(Self.read(path) == "<A17>\nf(x)\n")
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_gid == 65534, "group \(info.st_gid)")
        #expect(info.st_mode & 0o7777 == 0o660, "mode \(String(info.st_mode & 0o7777, radix: 8))")
    }

    @Test func savingMergesFirstThenWritesAtomicallyKeepingPermissions() throws {
        let path = try Self.file("a\n")
        _ = chmod(path, 0o640)
        let inode = (try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.intValue
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "a\n", on: daemon)
        ann.edit(2..<2, with: "b\n")
        try "start\na\n".write(toFile: path, atomically: false, encoding: .utf8)
        let saved = ann.request("document/save", ["uri": "doc"])["result"]
        #expect(saved?["importedEdits"] == 1)
        #expect(Self.read(path) == "start\na\nb\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o640)
        #expect((attributes[.systemFileNumber] as? NSNumber)?.intValue != inode, "replaced by a rename, not rewritten in place")
        #expect(try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent) == ["notes.txt"])
        ann.deliver()
        #expect(ann.string == "start\na\nb\n")
        #expect(saved?["hash"]?.stringValue == TextHash.sha256Hex("start\na\nb\n"))
    }

    /// `:w` in the editor writes the file itself; `document/saved` says so, so the editor's
    /// edits are not merged a second time as if made outside.
    @Test func anEditorsOwnSaveIsNotTakenForAnOutsideChange() throws {
        let path = try Self.file("hello\n")
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "hello\n", on: daemon)
        ann.edit(5..<5, with: ", world")
        try ann.string.write(toFile: path, atomically: false, encoding: .utf8)
        ann.notify("document/saved", ["uri": "doc", "epoch": .integer(Int64(ann.epoch)), "revision": .integer(Int64(ann.daemonRevision))])
        try (ann.string + "appended outside\n").write(toFile: path, atomically: false, encoding: .utf8)
        #expect(ann.request("document/save", ["uri": "doc"])["result"]?["importedEdits"] == 1)
        #expect(Self.read(path) == "hello, world\nappended outside\n")
        ann.deliver()
        #expect(ann.string == "hello, world\nappended outside\n")
    }

    /// A `document/saved` for a revision or epoch the editor cannot be at is refused (a
    /// notification: logged) and leaves the binding as it was.
    @Test func aSavedNoticeThatDoesNotFitChangesNothing() throws {
        let path = try Self.file("hello\n")
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "hello\n", on: daemon)
        let before = try #require(daemon.document("doc")?.file)
        ann.edit(5..<5, with: "!")
        ann.notify("document/saved", ["uri": "doc", "epoch": .integer(Int64(ann.epoch)), "revision": 99])
        ann.notify("document/saved", ["uri": "doc", "epoch": 7, "revision": 0])
        ann.notify("document/saved", ["uri": "nope", "epoch": 0, "revision": 0])
        let after = try #require(daemon.document("doc")?.file)
        #expect(after.hash == before.hash)
        #expect(after.base.string == "hello\n")
        #expect(ann.request("document/text", ["uri": "doc"])["result"]?["text"] == "hello!\n", "the session goes on")
    }

    @Test func theBindingSurvivesARestart() throws {
        let path = try Self.file("kept\n")
        let data = DaemonProcess.temporaryDirectory("bound-data")
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let daemon = Daemon(store: store)
            let ann = Self.boundEditor(path, text: "kept\n", on: daemon)
            ann.edit(0..<0, with: "1 ")
            #expect(ann.request("document/save", ["uri": "doc"])["result"] != nil)
        }
        try "1 kept\nand more\n".write(toFile: path, atomically: false, encoding: .utf8)
        let daemon = Daemon(store: try DocumentStore(path: data, logger: Logger(label: "test")))
        let bob = TestEditor(daemon: daemon)
        bob.initialize()
        bob.open("doc", text: "")
        #expect(bob.string == "1 kept\nand more\n")
    }

    @Test func badFilesAndRequestsChangeNothing() throws {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize()
        #expect(ann.request("document/open", ["uri": "doc", "file": "relative.txt"])["error"]?["code"] == -32602)
        let directory = DaemonProcess.temporaryDirectory("bound-dir")
        let refused = ann.request("document/open", ["uri": "doc", "file": .string(directory)])
        #expect(refused["error"]?["code"] == -32016)
        #expect(refused["error"]?["message"]?.stringValue?.contains("not a regular file") == true)
        #expect(ann.request("document/list")["result"] == [], "nothing was created")
        ann.open("plain", text: "x")
        #expect(ann.request("document/save", ["uri": "plain"])["error"]?["code"] == -32602)
        // A bound file that turns into something other than UTF-8 is not merged nor overwritten.
        let path = try Self.file("text\n")
        ann.request("document/open", ["uri": "doc", "text": "text\n", "file": .string(path)])
        try Data([0x66, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: path))
        let error = ann.request("document/save", ["uri": "doc"])["error"]
        #expect(error?["code"] == -32016)
        #expect(error?["message"]?.stringValue?.contains("not UTF-8") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([0x66, 0xFF, 0x0A]))
    }
    // MARK: Files as they are on disk: line endings, BOM, final newline

    static func fileWithBytes(_ bytes: [UInt8]) throws -> String {
        let path = DaemonProcess.temporaryDirectory("bound") + "/notes.txt"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func bytes(_ path: String) -> [UInt8] { (try? Data(contentsOf: URL(fileURLWithPath: path))).map { Array($0) } ?? [] }

    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    static func crlf(_ text: String) -> [UInt8] { Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8) }

    /// The file's bytes; what the editor shows (LF, no BOM); what the file must hold after the
    /// editor typed `<A17> ` at the start of line 2 and `document/save` wrote it.
    static let formats: [(name: String, file: [UInt8], shown: String, saved: [UInt8])] = [
        ("CRLF", crlf("f(x)\nline \"s\"\n"), "f(x)\nline \"s\"\n", crlf("f(x)\n<A17> line \"s\"\n")),
        ("BOM", bom + Array("f(x)\nline \"s\"\n".utf8), "f(x)\nline \"s\"\n", bom + Array("f(x)\n<A17> line \"s\"\n".utf8)),
        ("BOM+CRLF", bom + crlf("f(x)\nline \"s\"\n"), "f(x)\nline \"s\"\n", bom + crlf("f(x)\n<A17> line \"s\"\n")),
        ("no final newline", Array("f(x)\nline \"s\"".utf8), "f(x)\nline \"s\"", Array("f(x)\n<A17> line \"s\"".utf8)),
        ("CRLF, no final newline", crlf("f(x)\nline \"s\""), "f(x)\nline \"s\"", crlf("f(x)\n<A17> line \"s\"")),
        ("mixed endings stay as they are", Array("f(x)\r\nline \"s\"\n".utf8), "f(x)\r\nline \"s\"\n", Array("f(x)\r\n<A17> line \"s\"\n".utf8)),
    ]

    @Test(arguments: 0..<6)
    func aFileIsWrittenBackAsItWasOnDisk(format index: Int) throws {
        let format = Self.formats[index]
        let path = try Self.fileWithBytes(format.file)
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: format.shown, on: daemon)
        #expect(ann.string == format.shown, "\(format.name): the open changes nothing")
        let lineTwo = Array(format.shown.unicodeScalars).firstIndex(of: "\n").map { $0 + 1 } ?? 0
        ann.edit(lineTwo..<lineTwo, with: "<A17> ")
        let saved = ann.request("document/save", ["uri": "doc"])["result"]
        #expect(saved?["importedEdits"] == 0, "\(format.name): nothing imported from the file's own format")
        #expect(saved?["hash"]?.stringValue == TextHash.sha256Hex(ann.string), "the hash is the text's, as the editor compares it")
        #expect(Self.bytes(path) == format.saved, "\(format.name): \(String(decoding: Self.bytes(path), as: UTF8.self).debugDescription)")
        ann.deliver()
        #expect(ann.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue == ann.string)
        // Saving again changes nothing: no \r or U+FEFF multiplies, no newline appears.
        #expect(ann.request("document/save", ["uri": "doc"])["result"]?["importedEdits"] == 0)
        #expect(Self.bytes(path) == format.saved)
        ann.deliver()
        #expect(!ann.string.unicodeScalars.contains("\u{FEFF}"))
    }

    /// An outside edit to a CRLF file imports only the real change, never a `\r` per line.
    @Test func anOutsideEditToACRLFFileImportsOnlyTheRealChange() throws {
        let path = try Self.fileWithBytes(Self.crlf("one\ntwo\n"))
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "one\ntwo\n", on: daemon)
        ann.edit(0..<0, with: "<A1> ")
        try Data(Self.crlf("one\ntwo f(x)\nthree \"s\"\n")).write(to: URL(fileURLWithPath: path))
        let saved = ann.request("document/save", ["uri": "doc"])["result"]
        #expect(saved?["importedEdits"] == 1, "one edit: the two changed lines, without a \\r")
        ann.deliver()
        #expect(ann.string == "<A1> one\ntwo f(x)\nthree \"s\"\n")
        #expect(Self.bytes(path) == Self.crlf("<A1> one\ntwo f(x)\nthree \"s\"\n"))
    }

    /// A save from the editor (`:w` of a CRLF buffer, `fixeol` adding the final newline) sends
    /// `document/saved`: the file is the daemon's own text, so nothing is imported again, and
    /// the next save keeps the format the editor wrote.
    @Test func anEditorsSaveOfACRLFOrNoEOLFileIsNotReimported() throws {
        for (file, shown, written, expected) in [
            (Self.crlf("a\nb\n"), "a\nb\n", Self.crlf("a\nb <B2>\n"), Self.crlf("a\nb <B2>\n")),
            (Array("a\nb".utf8), "a\nb", Array("a\nb <B2>\n".utf8), Array("a\nb <B2>\n".utf8)),
            (Self.bom + Self.crlf("a\nb"), "a\nb", Self.bom + Self.crlf("a\nb <B2>\n"), Self.bom + Self.crlf("a\nb <B2>\n")),
        ] {
            let path = try Self.fileWithBytes(file)
            let daemon = ConcurrentEditingTests.makeDaemon()
            let ann = Self.boundEditor(path, text: shown, on: daemon)
            let end = shown.hasSuffix("\n") ? shown.unicodeScalars.count - 1 : shown.unicodeScalars.count
            ann.edit(end..<end, with: " <B2>")
            try Data(written).write(to: URL(fileURLWithPath: path))
            ann.notify("document/saved", ["uri": "doc", "epoch": .integer(Int64(ann.epoch)), "revision": .integer(Int64(ann.daemonRevision))])
            let bob = TestEditor(daemon: daemon)
            bob.initialize(user: "bob")
            bob.open("doc", text: "")
            #expect(bob.string == ann.string, "the editor's save is not merged in again")
            #expect(ann.request("document/save", ["uri": "doc"])["result"]?["importedEdits"] == 0)
            #expect(Self.bytes(path) == expected)
            ann.deliver()
            #expect(ann.string == shown.replacingOccurrences(of: "b", with: "b <B2>"))
        }
    }

    /// The format is kept with the binding: after a restart a CRLF file with a BOM is still
    /// written as one.
    @Test func theFormatSurvivesARestart() throws {
        let path = try Self.fileWithBytes(Self.bom + Self.crlf("kept\n"))
        let data = DaemonProcess.temporaryDirectory("bound-data")
        do {
            let daemon = Daemon(store: try DocumentStore(path: data, logger: Logger(label: "test")))
            let ann = Self.boundEditor(path, text: "kept\n", on: daemon)
            ann.edit(0..<0, with: "1 ")
            #expect(ann.request("document/save", ["uri": "doc"])["result"] != nil)
        }
        let daemon = Daemon(store: try DocumentStore(path: data, logger: Logger(label: "test")))
        let bob = TestEditor(daemon: daemon)
        bob.initialize()
        bob.open("doc", text: "1 kept\n")
        bob.edit(7..<7, with: "f(x)\n")
        #expect(bob.request("document/save", ["uri": "doc"])["result"]?["importedEdits"] == 0)
        #expect(Self.bytes(path) == Self.bom + Self.crlf("1 kept\nf(x)\n"))
    }
    // MARK: Safe temporary files (issue 20, item 8)

    static func mode(_ path: String) -> Int? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : nil
    }

    /// A `FILE.tmp` symlink planted by someone who can write the file's directory is never
    /// followed nor changed by a save, nor is a file planted under that predictable name; the
    /// save still succeeds with the file's own permissions.
    @Test func aPlantedTemporaryFileOrSymlinkIsNeverFollowedOrModified() throws {
        let path = try Self.file("f(x)\n")
        _ = chmod(path, 0o640)
        let directory = (path as NSString).deletingLastPathComponent
        let victim = DaemonProcess.temporaryDirectory("victim") + "/id_key"
        try "secret <K1>\n".write(toFile: victim, atomically: false, encoding: .utf8)
        _ = chmod(victim, 0o600)
        #expect(symlink(victim, path + ".tmp") == 0)
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "f(x)\n", on: daemon)
        ann.edit(0..<0, with: "<A17> ")
        #expect(ann.request("document/save", ["uri": "doc"])["result"]?["importedEdits"] == 0)
        #expect(Self.read(path) == "<A17> f(x)\n")
        #expect(Self.mode(path) == 0o640)
        #expect(Self.read(victim) == "secret <K1>\n", "the symlink's target is untouched")
        #expect(Self.mode(victim) == 0o600, "and keeps its permissions")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: path + ".tmp")) == victim, "the planted link is left as it was")
        // A regular file planted under the predictable name is not touched either.
        FileSystem.remove(path + ".tmp")
        try "planted \"s\"\n".write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        ann.edit(0..<0, with: "g(y) ")
        #expect(ann.request("document/save", ["uri": "doc"])["result"] != nil)
        #expect(Self.read(path) == "g(y) <A17> f(x)\n")
        #expect(Self.read(path + ".tmp") == "planted \"s\"\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["notes.txt", "notes.txt.tmp"],
                "no temporary file is left behind")
    }

    /// Every atomic write (snapshots, bindings, saves) goes through one temporary file with an
    /// unpredictable name beside the target, and gets exactly the mode asked for, whatever the
    /// umask and whatever was planted.
    @Test func atomicWritesUseUnpredictableNamesAndExactModes() throws {
        let directory = DaemonProcess.temporaryDirectory("atomic")
        let target = directory + "/snapshot-1"
        let names = (0..<4).map { _ in FileSystem.temporaryName(for: target) }
        #expect(Set(names).count == 4)
        #expect(names.allSatisfy { $0.hasPrefix(directory + "/.snapshot-1.") && $0.hasSuffix(".tmp") && $0.count == target.count + 2 + 32 + 4 })
        let elsewhere = DaemonProcess.temporaryDirectory("elsewhere") + "/profile"
        try "<P1>\n".write(toFile: elsewhere, atomically: false, encoding: .utf8)
        #expect(symlink(elsewhere, target + ".tmp") == 0)
        let oldMask = umask(0o077)
        defer { umask(oldMask) }
        try FileSystem.writeAtomically(Array("state <S2>".utf8), to: target, mode: 0o644)
        #expect(Self.read(target) == "state <S2>")
        #expect(Self.mode(target) == 0o644, "fchmod on the descriptor: the umask does not narrow it")
        #expect(Self.read(elsewhere) == "<P1>\n")
        // A symlink standing at the target itself is replaced by the rename, never followed.
        FileSystem.remove(target)
        #expect(symlink(elsewhere, target) == 0)
        try FileSystem.writeAtomically(Array("new".utf8), to: target)
        #expect(Self.read(elsewhere) == "<P1>\n")
        #expect(Self.mode(target) == 0o600)
    }

    /// A bound file is read with O_NOFOLLOW: one replaced by a symlink (to a file the user never
    /// shared) is neither read into the document nor written through; opening a symlink is
    /// refused with a message that says to open the file it points to.
    @Test func aBoundFileReplacedByASymlinkIsNeitherReadNorWritten() throws {
        let path = try Self.file("shared <A1>\n")
        let secret = DaemonProcess.temporaryDirectory("secret") + "/key"
        try "secret <K1>\n".write(toFile: secret, atomically: false, encoding: .utf8)
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = Self.boundEditor(path, text: "shared <A1>\n", on: daemon)
        FileSystem.remove(path)
        #expect(symlink(secret, path) == 0)
        let error = ann.request("document/save", ["uri": "doc"])["error"]
        #expect(error?["code"] == -32016)
        #expect(error?["message"]?.stringValue?.contains("symbolic link") == true, "\(String(describing: error))")
        #expect(Self.read(secret) == "secret <K1>\n")
        #expect(ann.request("document/text", ["uri": "doc"])["result"]?["text"] == "shared <A1>\n", "nothing of the target was read")
        let bob = TestEditor(daemon: daemon)
        bob.initialize(user: "bob")
        let refused = bob.request("document/open", ["uri": "other", "text": "", "file": .string(path)])
        #expect(refused["error"]?["message"]?.stringValue?.contains("symbolic link") == true)
    }
}
