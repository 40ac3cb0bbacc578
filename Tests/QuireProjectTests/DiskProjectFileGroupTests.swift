import Foundation
import Glibc
import QuireProject
import Testing

/// A file a peer's edit rewrites on this disk keeps its group and its mode, as the user's own
/// save does: the new file the kernel makes takes the user's primary group, so a file kept
/// `0660` for another group (`chgrp team notes.txt`) became readable and writable by that
/// primary group instead (`users` on many systems: everyone). Needs root to give the file a
/// group of another (`nobody`'s, 65534).
@Suite struct DiskProjectFileGroupTests {
    @Test(.enabled(if: geteuid() == 0)) func aRewrittenFileKeepsItsGroupAndMode() throws {
        let folder = try TemporaryFolder()
        try folder.write("src/team.h", "<A17>\n")
        let path = folder.path + "/src/team.h"
        #expect(chown(path, getuid(), 65534) == 0 && chmod(path, 0o660) == 0)
        try DiskProject(root: folder.path).perform([.write(try ProjectPath("src/team.h"), "<A17>\nf(x)\n")])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "<A17>\nf(x)\n")
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_gid == 65534, "group \(info.st_gid)")
        #expect(info.st_mode & 0o7777 == 0o660, "mode \(String(info.st_mode & 0o7777, radix: 8))")
    }
}
