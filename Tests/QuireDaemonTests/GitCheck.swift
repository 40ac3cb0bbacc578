import Foundation
import QuireProject
import QuireTestSupport
import Testing

/// Asks the system's git what it takes for a repository: the truth `GitRepositoryLook` and the
/// writer's rule 5 must agree with. nil when git is not installed.
enum GitCheck {
    static let git = ["/usr/bin/git", "/bin/git", "/usr/local/bin/git"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether git, run in `folder`, finds a repository there or in a folder up to `folder`'s
    /// parent (never above it: `GIT_CEILING_DIRECTORIES`), with no configuration of the user's.
    static func takesForRepository(_ folder: String) -> Bool? {
        guard let git else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: git)
        process.arguments = ["rev-parse", "--git-dir"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.environment = ["GIT_CEILING_DIRECTORIES": (folder as NSString).deletingLastPathComponent, "GIT_CONFIG_NOSYSTEM": "1",
                               "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": folder, "PATH": "/usr/bin:/bin"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

/// `GitRepositoryLook.looksLikeHead` against git itself: a folder with `objects/`, `refs/` and
/// a `HEAD` of each text is a repository to git exactly when the function says so.
@Suite struct GitRepositoryLookAgreesWithGitTests {
    @Test(.enabled(if: GitCheck.git != nil, "git is not installed"),
          arguments: ["ref: refs/heads/main\n", "ref:refs/heads/x", "ref: \t\n\r refs/tags/v1", "ref:\n\nrefs/heads/main\n",
                      String(repeating: "0f", count: 20), String(repeating: "AB", count: 20) + "\n", String(repeating: "a", count: 64) + "\n",
                      "", "ref: heads/main", "ref refs/heads/main", " ref: refs/heads/main", "\u{FEFF}ref: refs/heads/main",
                      "ref:\u{0B}refs/heads/main", String(repeating: "0f", count: 19) + "0", String(repeating: "0f", count: 19) + "0g",
                      "# Heading <A17>\n", "f(x)"])
    func looksLikeHeadIsWhatGitTakes(_ text: String) throws {
        let folder = DaemonProcess.temporaryDirectory("git-agree") + "/repo"
        try FileManager.default.createDirectory(atPath: folder + "/objects", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/refs", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/HEAD"))
        #expect(GitCheck.takesForRepository(folder) == GitRepositoryLook.looksLikeHead(text), "\(text.debugDescription)")
    }
}
