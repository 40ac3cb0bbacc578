import Foundation
import Glibc
import Testing
import QuireProject
import ReplicatingTypes

/// What a hostile peer's paths cannot reach: a repository's own `.git` folder (its hooks and
/// `config` run code on the host), at any level and in any letter case.
@Suite struct ProjectPathSafetyTests {
    @Test func gitFoldersAreNeverProjectPaths() {
        for text in [".git", ".git/hooks/pre-commit", ".git/config", "sub/.git/config", "a/b/.GIT/hooks/x", ".Git/HEAD", ".gIT"] {
            #expect(throws: ProjectPath.Refusal.self, "\(text)") { try ProjectPath(text) }
        }
        for text in [".github/workflows/ci.yml", "x.git", ".gitignore", "a/.gitmodules", "git/.gitx", ".git2/a"] {
            #expect((try? ProjectPath(text)) != nil, "\(text)")
        }
    }

    /// A tree batch naming a path in `.git` (made by hand, as a hostile peer would) does not
    /// decode, so it never reaches a tree or a disk.
    @Test func aTreeBatchIntoGitDoesNotDecode() throws {
        for (template, target) in [("zzzz/hooks/pre-commit", ".git"), ("a/zzzz/config", ".GIT")] {
            let operation = ProjectTree.Operation(file: FileID(replica: ReplicaID(7), serial: 1), path: try ProjectPath(template),
                                                  timestamp: LamportTimestamp(counter: 3, replica: ReplicaID(7)))
            var bytes = ProjectTree.Operation.encode([operation])
            let at = try #require(bytes.firstRange(of: Array("zzzz".utf8)))
            bytes.replaceSubrange(at, with: Array(target.utf8))
            #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(bytes) }
        }
    }

    /// A file the daemon makes (a partner's new file) is 0644 less the umask, as any program's
    /// would be: someone whose umask keeps their files from other users gets 0600, not 0644.
    @Test func newFilesFollowTheUmask() throws {
        let folder = try TemporaryFolder()
        let disk = DiskProject(root: folder.path)
        let previous = umask(0o077)
        let written = Result { try disk.write("private\n", to: ProjectPath("sub/new.txt")) }
        umask(previous)
        try written.get()
        let attributes = { (path: String) in try FileManager.default.attributesOfItem(atPath: folder.path + path)[.posixPermissions] as? Int }
        #expect(try attributes("/sub/new.txt") == 0o600)
        #expect(try attributes("/sub") == 0o700)
    }
}
