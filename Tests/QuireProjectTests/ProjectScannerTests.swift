import Foundation
import Glibc
import QuireProject
import ReplicatingTypes
import Testing

/// What the scanner leaves out and why, its bounds, and that it never leaves the root.
@Suite struct ProjectScannerTests {
    func paths(_ result: ProjectScanner.Result) -> [String] { result.files.map(\.path.string) }

    func reason(_ result: ProjectScanner.Result, _ path: String) -> ProjectScanner.Reason? {
        result.leftOut.first { $0.path == path }?.reason
    }

    @Test func binaryAndNonUTF8FilesAreLeftOutWithTheirReason() throws {
        let folder = try TemporaryFolder()
        try folder.write("text.txt", "plain text é 😀\n")
        try folder.write("image.png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        try folder.write("latin1.txt", [0x63, 0x61, 0x66, 0xE9, 0x0A])
        try folder.write("empty.txt", [])
        // A character cut by the end of the first block is fine when the file goes on.
        var long = [UInt8](repeating: UInt8(ascii: "a"), count: 8191) + Array("é".utf8) + Array("rest\n".utf8)
        try folder.write("cut.txt", long)
        // A file that ends in half a character is not UTF-8.
        long = Array("abc".utf8) + [0xC3]
        try folder.write("halfchar.txt", long)
        let result = try ProjectScanner().scan(root: folder.path)
        #expect(paths(result) == ["cut.txt", "empty.txt", "text.txt"])
        #expect(reason(result, "image.png") == .binary)
        #expect(reason(result, "latin1.txt") == .notUTF8)
        #expect(reason(result, "halfchar.txt") == .notUTF8)
        #expect(result.totalBytes == 8191 + 2 + 5 + Array("plain text é 😀\n".utf8).count)
    }

    @Test func oversizedFilesAreLeftOutAndTheTotalIsBounded() throws {
        let folder = try TemporaryFolder()
        try folder.write("small.txt", String(repeating: "x", count: 100))
        try folder.write("big.txt", String(repeating: "x", count: 1001))
        var limits = ProjectScanner.Limits()
        limits.fileBytes = 1000
        let result = try ProjectScanner(limits: limits).scan(root: folder.path)
        #expect(paths(result) == ["small.txt"])
        #expect(reason(result, "big.txt") == .tooLarge(bytes: 1001))

        limits.fileBytes = 2000
        limits.totalBytes = 1000
        #expect(throws: ProjectScanner.Failure.tooManyBytes(limit: 1000)) { try ProjectScanner(limits: limits).scan(root: folder.path) }
    }

    @Test func tooManyFilesOrEntriesIsAClearError() throws {
        let folder = try TemporaryFolder()
        for i in 0..<12 { try folder.write("f\(i).txt", "x") }
        var limits = ProjectScanner.Limits()
        limits.files = 11
        let error = #expect(throws: ProjectScanner.Failure.tooManyFiles(limit: 11)) { try ProjectScanner(limits: limits).scan(root: folder.path) }
        #expect(error?.description.contains(".quireignore") == true)
        limits.files = 12
        #expect(try ProjectScanner(limits: limits).scan(root: folder.path).files.count == 12)
        limits.entries = 5
        #expect(throws: ProjectScanner.Failure.tooManyEntries(limit: 5)) { try ProjectScanner(limits: limits).scan(root: folder.path) }
    }

    @Test func symbolicLinksAreNeverFollowed() throws {
        let outside = try TemporaryFolder()
        try outside.write("secret.txt", "outside the root\n")
        try outside.write("tree/inner.txt", "outside too\n")
        let folder = try TemporaryFolder()
        try folder.write("inside.txt", "in\n")
        try folder.link("to-file", to: outside.path + "/secret.txt")
        try folder.link("to-folder", to: outside.path + "/tree")
        try folder.link("relative-up", to: "../")
        try folder.link("to-inside", to: "inside.txt")
        try folder.link("dangling", to: "/nonexistent/file")
        let result = try ProjectScanner().scan(root: folder.path)
        #expect(paths(result) == ["inside.txt"])
        for link in ["dangling", "relative-up", "to-file", "to-folder", "to-inside"] {
            #expect(reason(result, link) == .symbolicLink, "\(link)")
        }
        // The reader refuses links at every step too.
        #expect(throws: ProjectReader.Failure.self) { try ProjectReader.text(of: ProjectPath("to-file"), root: folder.path) }
        #expect(throws: ProjectReader.Failure.self) { try ProjectReader.text(of: ProjectPath("to-folder/inner.txt"), root: folder.path) }
        #expect(try ProjectReader.text(of: ProjectPath("inside.txt"), root: folder.path) == "in\n")
        // Nor is a link on the root's own path: the daemon resolves the root once, when it is
        // shared or joined (`realpath`), so a link there later was put by someone who may write
        // in a folder above it, and may lead to any folder of the owner's.
        try outside.link("project", to: folder.path)
        try outside.makeFolder("real")
        try outside.link("real/through", to: folder.path)
        for root in [outside.path + "/project", outside.path + "/project/", outside.path + "/real/through"] {
            let failure = #expect(throws: ProjectScanner.Failure.self) { try ProjectScanner().scan(root: root) }
            #expect(failure?.description.contains("symbolic link") == true, "\(String(describing: failure))")
            #expect(throws: ProjectReader.Failure.self) { try ProjectReader.text(of: ProjectPath("inside.txt"), root: root) }
            #expect(throws: DiskProject.Failure.self) { try DiskProject(root: root).write("x\n", to: ProjectPath("new.txt")) }
            #expect(ProjectScanner().reasonToLeaveOut(try ProjectPath("inside.txt"), root: root) != nil)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/new.txt"))
        #expect(paths(try ProjectScanner().scan(root: outside.path + "/../" + (outside.path as NSString).lastPathComponent + "/real/../../"
                                                 + (folder.path as NSString).lastPathComponent)) == ["inside.txt"], "`..` on a path without links")
    }

    /// The scan of a file shared by itself looks at that one name: nothing else in the folder is
    /// listed or read (not even an ignore file that would leave it out), a link or binary is left
    /// out with its reason, and a missing file is an empty result.
    @Test func aFileSharedByItselfIsScannedAlone() throws {
        let folder = try TemporaryFolder()
        try folder.write("notes.md", "# notes\n")
        try folder.write(".gitignore", "notes.md\n")
        try folder.write("other.txt", "other\n")
        try folder.write("deep/er.txt", "deeper\n")
        try folder.write("image.png", [0x89, 0x50, 0, 0])
        try folder.link("link.md", to: "notes.md")
        let scanner = ProjectScanner()
        let alone = try scanner.scan(root: folder.path, file: ProjectPath("notes.md"))
        #expect(paths(alone) == ["notes.md"] && alone.leftOut.isEmpty && alone.totalBytes == 8)
        #expect(reason(try scanner.scan(root: folder.path, file: ProjectPath("image.png")), "image.png") == .binary)
        #expect(reason(try scanner.scan(root: folder.path, file: ProjectPath("link.md")), "link.md") == .symbolicLink)
        #expect(reason(try scanner.scan(root: folder.path, file: ProjectPath("deep")), "deep") == .notRegularFile)
        let missing = try scanner.scan(root: folder.path, file: ProjectPath("gone.md"))
        #expect(missing.files.isEmpty && missing.leftOut.isEmpty)
        #expect(throws: ProjectScanner.Failure.self) { try scanner.scan(root: folder.path, file: ProjectPath("deep/er.txt")) }
    }

    @Test func aFIFOIsLeftOutWithoutBlocking() throws {
        let folder = try TemporaryFolder()
        try folder.write("a.txt", "a\n")
        #expect(mkfifo(folder.path + "/pipe", 0o600) == 0)
        let result = try ProjectScanner().scan(root: folder.path)
        #expect(paths(result) == ["a.txt"])
        #expect(reason(result, "pipe") == .notRegularFile)
        #expect(throws: ProjectReader.Failure.self) { try ProjectReader.text(of: ProjectPath("pipe"), root: folder.path) }
    }

    @Test func gitFoldersAreSkippedAndQuireIgnoreOverridesGitIgnore() throws {
        let folder = try TemporaryFolder()
        try folder.write(".git/config", "[core]\n")
        try folder.write("sub/.git", "gitdir: ../.git/worktrees/sub\n")
        try folder.write(".gitignore", "*.log\nbuild/\n")
        try folder.write(".quireignore", "!keep.log\nnotes/\n")
        try folder.write("a.log", "x")
        try folder.write("keep.log", "x")
        try folder.write("build/out.txt", "x")
        try folder.write("notes/todo.md", "x")
        try folder.write("sub/.quireignore", "*.md\n")
        try folder.write("sub/readme.md", "x")
        try folder.write("sub/code.swift", "x")
        let result = try ProjectScanner().scan(root: folder.path)
        #expect(paths(result) == [".gitignore", ".quireignore", "keep.log", "sub/.quireignore", "sub/code.swift"])
        #expect(result.leftOut.isEmpty)
        #expect(result.ignored == 4)
    }

    /// Other version-control systems' repository folders are left out as `.git` is: their
    /// configuration (Mercurial's `hgrc`, which can hold a password in a path) is not shared.
    @Test func otherRepositoryFoldersAreSkipped() throws {
        let folder = try TemporaryFolder()
        try folder.write(".hg/hgrc", "[paths]\ndefault = https://ann:secret@example.org/repo\n")
        try folder.write(".hg/requires", "store\n")
        try folder.write("sub/.JJ/repo/config.toml", "[ui]\npager = \"less\"\n")
        try folder.write("_darcs/prefs/defaults", "x\n")
        try folder.write(".hgignore", "*.o\n")
        try folder.write("a.txt", "f(x)\n")
        let result = try ProjectScanner().scan(root: folder.path)
        #expect(paths(result) == [".hgignore", "a.txt"])
        #expect(!result.folders.contains { $0.contains(".hg") || $0.lowercased().contains(".jj") || $0.contains("_darcs") }, "\(result.folders)")
        #expect(ProjectScanner().isIgnored(try ProjectPath(".hg/hgrc"), root: folder.path))
        #expect(!ProjectScanner().isIgnored(try ProjectPath(".hgignore"), root: folder.path))
    }

    @Test func unusableNamesAreReportedNotShared() throws {
        let folder = try TemporaryFolder()
        try folder.write("ok.txt", "x")
        let bad = folder.path + "/bad\u{7}bell.txt"
        #expect(FileManager.default.createFile(atPath: bad, contents: Data("x".utf8)))
        // A name that is not UTF-8.
        let raw = Array((folder.path + "/").utf8) + [0x66, 0xFF, 0x2E, 0x74, 0x78, 0x74]
        let fd = raw.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in open(Array(chars) + [0], O_CREAT | O_WRONLY, 0o600) }
        }
        #expect(fd >= 0)
        close(fd)
        let result = try ProjectScanner().scan(root: folder.path)
        #expect(paths(result) == ["ok.txt"])
        #expect(result.leftOut.count == 2)
        #expect(result.leftOut.allSatisfy { if case .unusableName = $0.reason { return true } else { return false } })
        #expect(result.leftOut.allSatisfy { !$0.path.unicodeScalars.contains { $0.value < 0x20 } }, "shown names are escaped")
    }

    @Test func anIgnoreFileTooLargeIsAnError() throws {
        let folder = try TemporaryFolder()
        try folder.write("sub/.gitignore", String(repeating: "*.o\n", count: 100))
        var limits = ProjectScanner.Limits()
        limits.ignoreFileBytes = 100
        #expect(throws: ProjectScanner.Failure.ignoreFileTooLarge("sub/.gitignore is larger than 100 bytes")) { try ProjectScanner(limits: limits).scan(root: folder.path) }
        try folder.write("sub/.gitignore", "*.o\n" + String(repeating: "x", count: 5000) + "\n")
        #expect(throws: ProjectScanner.Failure.ignoreFileTooLarge("sub/.gitignore has a line longer than 4096 bytes (line 2)")) { try ProjectScanner().scan(root: folder.path) }
        #expect(throws: ProjectScanner.Failure.rootUnreadable("\"\(folder.path)/missing\": No such file or directory")) {
            try ProjectScanner().scan(root: folder.path + "/missing")
        }
    }

    @Test func pathsAreBounded() throws {
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("/etc/passwd") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("a/../../b") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("a//b") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("a/./b") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("a/") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("a\nb") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath(String(repeating: "x", count: 256)) }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath(Array(repeating: "a", count: 65).joined(separator: "/")) }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath(Array(repeating: String(repeating: "x", count: 200), count: 6).joined(separator: "/")) }
        #expect(try ProjectPath("src/a b/..c/é.txt").ancestors == ["src", "src/a b", "src/a b/..c"])
        #expect(try ProjectPath("src/lib/x").isInside(folder: "src"))
        #expect(try !ProjectPath("srcx/lib").isInside(folder: "src"))
    }
}

@Suite struct ProjectRootTests {
    @Test func theNearestMarkedFolderIsTheRoot() throws {
        let folder = try TemporaryFolder()
        try folder.write("repo/.git/HEAD", "ref: refs/heads/main\n")
        try folder.write("repo/src/deep/file.txt", "x")
        try folder.write("repo/vendor/lib/.quire-root", "")
        try folder.write("repo/worktree/.git", "gitdir: ../.git\n")
        try folder.makeFolder("repo/worktree/sub")
        #expect(ProjectRoot.find(from: folder.path + "/repo/src/deep") == folder.path + "/repo")
        #expect(ProjectRoot.find(from: folder.path + "/repo") == folder.path + "/repo")
        #expect(ProjectRoot.find(from: folder.path + "/repo/vendor/lib") == folder.path + "/repo/vendor/lib")
        #expect(ProjectRoot.find(from: folder.path + "/repo/worktree/sub") == folder.path + "/repo/worktree")
        #expect(ProjectRoot.find(from: "relative/path") == nil)
    }
}

@Suite struct ProjectPathTests {
    /// A `/` followed by a combining mark is one `Character`; it must still separate components.
    @Test func slashesAreFoundScalarByScalar() throws {
        let path = try ProjectPath("a/\u{301}b/c")
        #expect(path.components == ["a", "\u{301}b", "c"])
        #expect(path.ancestors == ["a", "a/\u{301}b"])
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("a/\u{301}/..") }
        #expect(throws: ProjectPath.Refusal.self) { try ProjectPath("x/..\u{0}") }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p/\u{301}", addresses: [PeerAddress("h:1")], secret: Array(repeating: 1, count: 30), fingerprint: Array(repeating: 2, count: 16)) }
    }

    @Test func pathsDifferingOnlyInNormalizationAreTwoPaths() throws {
        let composed = try ProjectPath("caf\u{E9}"), decomposed = try ProjectPath("cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        var tree = ProjectTree(replica: ReplicaID(1))
        _ = try tree.create(at: composed)
        _ = try tree.create(at: decomposed)
        #expect(tree.view.files.count == 2)
        #expect(tree.view.conflicted.isEmpty)
    }
}
