import EditingTraces
import Foundation
import QuireProject
import Testing

/// The scanner's ignore rules against git itself: random trees with random `.gitignore` files at
/// several levels, and the files the scanner shares must be exactly those `git ls-files --others
/// --exclude-standard` lists as untracked and not ignored.
@Suite struct GitIgnoreAgreementTests {
    /// Names files and folders are drawn from: they meet the patterns below in many ways.
    static let names = [
        "a", "b", "ab", "abc", "build", "Build", "src", "lib", "deep", "x.c", "y.h", "z.cc", "foo", "Foo", "foo.txt",
        "bar.md", "README.md", "#hash", "!bang", "sp ace", "[br]", "a*b", "a?b", "node_modules", "keep", "test_1.py",
        ".hidden", "é.txt", "x", "xy", "1", "9.log", "b-r.md", "tr ",
    ]

    /// Pattern lines in all the forms gitignore has.
    static let patterns = [
        "*.c", "*.h", "build/", "/build", "foo", "!foo", "!*.txt", "**/foo", "foo/**", "a/**/b", "src/*.c", "/src/",
        "\\#hash", "#hash", "# a comment", "\\!bang", "!\\!bang", "!bang", "*.md   ", "*.md\\ ", "tr\\ ", "tr ",
        "[abc]", "[a-c]*", "[!a]*", "[^x]*.h", "[[:upper:]]*", "[[:digit:]]", "[[:alpha:]][[:alpha:]]", "?", "??",
        "b?r.md", "lib/**/*.c", "**/deep/**", "*", "!*/", "x*", "**", "a*b", "a\\*b", "a\\?b", "[]br]*", "[br]",
        "\\[br\\]", "deep/", "/a/b/", "!/a/b/c", "sp ace", "sp\\ ace", "**/*.py", "node_modules", "!node_modules/keep",
        "*.txt/", "é*", "/*.md", "*/x.c", "src/**", "!src/**/", "!**/keep", "a/", "!a/", "**/a", "a/**", "**/b/**/x.c",
        "[a-", "foo\\", "*.[ch]", "[[:space:]]*", "[x-a]", "[[:nope:]]", "[[]*", "\\a", "b/", "!b", "*/", "/*", "!/*/",
        "**/**/x", "***/x.c", "abc/**/", "!README.md", "9.*", "*.log", "!9.log", "Build/", "src", "!src", "/lib/**",
        "", "   ", "!", "/", "!*.md", "!deep/**", "a/*", "*/b/*", "**/Foo", "[[:lower:]]*.c", "x.c/",
    ]

    /// Builds a random tree in `folder`: files and folders up to four deep, `.gitignore` files in
    /// some folders.
    static func generate(in folder: TemporaryFolder, random: inout SeededRandom) throws -> Int {
        var folders = [""]
        var fileCount = 0
        for _ in 0..<120 {
            let parent = folders[random.below(folders.count)]
            let name = names[random.below(names.count)]
            let path = parent.isEmpty ? name : parent + "/" + name
            if FileManager.default.fileExists(atPath: folder.path + "/" + path) { continue }
            if random.chance(0.3) && parent.split(separator: "/").count < 4 {
                try folder.makeFolder(path)
                folders.append(path)
            } else {
                try folder.write(path, "text \(fileCount)\n")
                fileCount += 1
            }
        }
        for parent in folders where random.chance(0.6) {
            let lines = (0..<(1 + random.below(7))).map { _ in patterns[random.below(patterns.count)] }
            let ending = random.chance(0.2) ? "\r\n" : "\n"
            try folder.write(parent.isEmpty ? ".gitignore" : parent + "/.gitignore", lines.joined(separator: ending) + (random.chance(0.5) ? ending : ""))
        }
        return fileCount
    }

    static func gitUntracked(in folder: String) throws -> [String] {
        _ = try run(["git", "init", "-q"], in: folder)
        let output = try run(["git", "ls-files", "--others", "--exclude-standard", "-z"], in: folder)
        return output.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    @Test(arguments: (1...30).map { UInt64($0) }) func sharedFilesAreGitsUntrackedFiles(seed: UInt64) throws {
        let folder = try TemporaryFolder()
        var random = SeededRandom(seed: seed)
        _ = try Self.generate(in: folder, random: &random)
        let scanned = try ProjectScanner().scan(root: folder.path)
        let git = try Self.gitUntracked(in: folder.path)
        let ours = scanned.files.map(\.path.string).sorted()
        #expect(scanned.leftOut.isEmpty, "seed \(seed): \(scanned.leftOut)")
        let onlyGit = Set(git).subtracting(ours).sorted(), onlyOurs = Set(ours).subtracting(git).sorted()
        #expect(onlyGit.isEmpty && onlyOurs.isEmpty, "seed \(seed): shared by git only \(onlyGit), by the scanner only \(onlyOurs)")
        if !(onlyGit.isEmpty && onlyOurs.isEmpty) {
            let ignores = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".gitignore") }
            for file in ignores.sorted() {
                let text = try String(contentsOfFile: folder.path + "/" + file, encoding: .utf8)
                print("seed \(seed) \(file): \(text.debugDescription)")
            }
        }
    }

    /// Each pattern alone at the root, against every path of one fixed tree: pins the matcher
    /// pattern by pattern, so a disagreement names the pattern.
    @Test func eachPatternAloneAgreesWithGit() throws {
        let folder = try TemporaryFolder()
        var random = SeededRandom(seed: 99)
        _ = try Self.generate(in: folder, random: &random)
        for file in try FileManager.default.subpathsOfDirectory(atPath: folder.path) where file.hasSuffix(".gitignore") {
            try FileManager.default.removeItem(atPath: folder.path + "/" + file)
        }
        _ = try run(["git", "init", "-q"], in: folder.path)
        for pattern in Self.patterns {
            try folder.write(".gitignore", pattern + "\n")
            let output = try run(["git", "ls-files", "--others", "--exclude-standard", "-z"], in: folder.path)
            let git = output.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.sorted()
            let ours = try ProjectScanner().scan(root: folder.path).files.map(\.path.string).sorted()
            #expect(git == ours, "pattern \(pattern.debugDescription): git only \(Set(git).subtracting(ours).sorted()), scanner only \(Set(ours).subtracting(git).sorted())")
        }
    }
}
