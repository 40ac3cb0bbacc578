import QuireProject
import Testing

/// `IgnoreLookup` reused over many paths (a writer's pass) answers what a fresh walk per path
/// answers: nested ignore files, a re-included file, ignored folders, folders not there yet.
@Suite struct IgnoreLookupTests {
    @Test func oneLookupForManyPathsAnswersAsAFreshWalkForEach() throws {
        let folder = try TemporaryFolder()
        try folder.write(".gitignore", "*.o\nbuild/\n.env\n")
        try folder.write("src/.gitignore", "!keep.o\ngen/\n")
        try folder.write("src/lib/.quireignore", "secret.h\n")
        try folder.write("src/lib/a.c", "int f(x);\n")
        try folder.makeFolder("build/out")
        let paths = try [
            ".env", "a.o", "main.c", "src/x.o", "src/keep.o", "src/gen/y.c", "src/lib/secret.h", "src/lib/a.c",
            "src/lib/deeper/secret.h", "src/lib/deeper/b.o", "build/out/z.c", "new/folder/.env", "new/folder/c.c",
            "src/lib/keep.o",
        ].map { try ProjectPath($0) }
        let scanner = ProjectScanner()
        var lookup = IgnoreLookup(scanner: scanner, root: folder.path)
        var verdicts: [String: Bool] = [:]
        // Twice over, in an order that walks deep folders before their parents.
        for path in paths.reversed() + paths {
            let shared = lookup.isIgnored(path)
            #expect(shared == scanner.isIgnored(path, root: folder.path), "\(path.string)")
            if let earlier = verdicts[path.string] { #expect(earlier == shared) }
            verdicts[path.string] = shared
        }
        #expect(verdicts.filter(\.value).keys.sorted() == [
            ".env", "a.o", "build/out/z.c", "new/folder/.env", "src/gen/y.c", "src/lib/deeper/b.o",
            "src/lib/deeper/secret.h", "src/lib/secret.h", "src/x.o",
        ])
    }
}
