import QuireProject
import Testing

/// The ignore rules pinned case by case, as git's documentation states them (the agreement with
/// git itself on random trees is `GitIgnoreAgreementTests`).
@Suite struct IgnoreRulesTests {
    func rules(_ levels: [(String, String)]) throws -> IgnoreRules {
        var rules = IgnoreRules()
        for (folder, text) in levels { rules = rules.adding(folder: folder, files: [try IgnoreFile(contents: Array(text.utf8))]) }
        return rules
    }

    @Test func patternForms() throws {
        let r = try rules([("", "*.o\n/root-only\nbuild/\ndocs/**/*.pdf\n**/cache\nlogs/**\n\\#kept\n\\!bang\nspace\\ \ntrailing   \n[Mm]akefile.bak\n")])
        #expect(r.isIgnored("a/b/x.o", isDirectory: false))
        #expect(r.isIgnored("root-only", isDirectory: false))
        #expect(!r.isIgnored("sub/root-only", isDirectory: false))
        #expect(r.isIgnored("sub/build", isDirectory: true))
        #expect(!r.isIgnored("sub/build", isDirectory: false), "a trailing / matches folders only")
        #expect(r.isIgnored("docs/x.pdf", isDirectory: false), "/**/ matches no folder too")
        #expect(r.isIgnored("docs/a/b/x.pdf", isDirectory: false))
        #expect(!r.isIgnored("other/docs/x.pdf", isDirectory: false), "a pattern with a / is anchored")
        #expect(r.isIgnored("deep/down/cache", isDirectory: true))
        #expect(r.isIgnored("logs/a/b", isDirectory: false))
        #expect(!r.isIgnored("logs", isDirectory: true), "x/** is what is inside x, not x")
        #expect(r.isIgnored("#kept", isDirectory: false))
        #expect(r.isIgnored("!bang", isDirectory: false))
        #expect(r.isIgnored("space ", isDirectory: false), "an escaped trailing space stays")
        #expect(r.isIgnored("trailing", isDirectory: false), "unescaped trailing spaces go")
        #expect(r.isIgnored("Makefile.bak", isDirectory: false) && r.isIgnored("makefile.bak", isDirectory: false))
        #expect(!r.isIgnored("x.c", isDirectory: false))
    }

    @Test func negationAndPrecedence() throws {
        let r = try rules([("", "*.log\n!keep.log\nsecret\n"), ("sub", "!*.log\nkeep.log\n")])
        #expect(r.isIgnored("a.log", isDirectory: false))
        #expect(!r.isIgnored("keep.log", isDirectory: false), "the last matching line wins")
        #expect(!r.isIgnored("sub/a.log", isDirectory: false), "a deeper file overrides")
        #expect(r.isIgnored("sub/keep.log", isDirectory: false))
        #expect(r.isIgnored("sub/secret", isDirectory: false), "rules above still apply where the deeper file says nothing")
    }

    @Test func malformedPatternsMatchNothing() throws {
        let r = try rules([("", "[abc\nfoo\\\n[[:nope:]]\n")])
        for path in ["a", "[abc", "foo", "foo\\", "x"] { #expect(!r.isIgnored(path, isDirectory: false), "\(path)") }
    }
}
