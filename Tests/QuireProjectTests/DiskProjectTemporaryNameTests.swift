import Foundation
import Glibc
import QuireProject
import Testing

/// Someone else who may write in a project folder (a 1777 folder, a shared group folder) can make
/// names there before the writer does. The writer's temporary names carry random bits, so
/// planting every name it would once have tried (`.quire-write-PID-SERIAL-0` to `-99`, here as
/// links to a file of the owner's outside the project) neither makes the write fail nor is
/// followed: the write succeeds, the linked file is untouched, the planted names stay as they were.
@Suite struct DiskProjectTemporaryNameTests {
    @Test func plantedTemporaryNamesNeitherBlockNorRedirectAWrite() throws {
        let folder = try TemporaryFolder()
        let outside = try TemporaryFolder()
        try outside.write("private.txt", "private\n")
        try folder.write("notes.md", "old\n")
        chmod(folder.path, 0o1777)
        var planted: [String] = []
        for serial in 0..<2 {
            for attempt in 0..<100 {
                let name = folder.path + "/.quire-write-\(getpid())-\(serial)-\(attempt)"
                #expect(symlink(outside.path + "/private.txt", name) == 0)
                planted.append(name)
            }
        }
        let disk = DiskProject(root: folder.path)
        try disk.write(Array("saved\n".utf8), to: try ProjectPath("notes.md"), syncingFolder: true)
        try disk.perform([.write(try ProjectPath("a.md"), "a\n"), .write(try ProjectPath("b.md"), "b\n")])
        #expect(try String(contentsOfFile: folder.path + "/notes.md", encoding: .utf8) == "saved\n")
        #expect(try String(contentsOfFile: folder.path + "/b.md", encoding: .utf8) == "b\n")
        #expect(try String(contentsOfFile: outside.path + "/private.txt", encoding: .utf8) == "private\n")
        for name in planted {
            var info = stat()
            #expect(lstat(name, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "\(name) is still the planted link")
        }
    }
}
