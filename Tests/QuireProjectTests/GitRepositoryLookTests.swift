import QuireProject
import Testing

/// `GitRepositoryLook` says of a `HEAD` file what git's `validate_headref` does: a branch
/// (`ref:`, white space, `refs/`) or a commit (40 hex digits first); nothing else.
struct GitRepositoryLookTests {
    @Test(arguments: ["ref: refs/heads/main\n", "ref:refs/heads/x", "ref: \t\n refs/tags/v1", "ref: refs/heads/.invalid\n",
                      String(repeating: "0f", count: 20), String(repeating: "AB", count: 20) + "\n", String(repeating: "a", count: 64) + "\n"])
    func headsGitTakes(_ text: String) {
        #expect(GitRepositoryLook.looksLikeHead(text), "\(text.debugDescription)")
    }

    @Test(arguments: ["", "ref: heads/main", "ref refs/heads/main", " ref: refs/heads/main", "\u{FEFF}ref: refs/heads/main",
                      String(repeating: "0f", count: 19) + "0", String(repeating: "0f", count: 19) + "0g", "# Heading <A17>\n", "f(x)"])
    func headsGitDoesNotTake(_ text: String) {
        #expect(!GitRepositoryLook.looksLikeHead(text), "\(text.debugDescription)")
    }

    @Test func theNameInAnyLetterCase() {
        #expect(GitRepositoryLook.isHeadName("HEAD") && GitRepositoryLook.isHeadName("head") && GitRepositoryLook.isHeadName("HeAd"))
        #expect(!GitRepositoryLook.isHeadName("HEADS") && !GitRepositoryLook.isHeadName("HEA") && !GitRepositoryLook.isHeadName("HEA\u{44}\u{301}"))
    }
}
