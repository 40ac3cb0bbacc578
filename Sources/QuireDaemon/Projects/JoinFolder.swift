import Foundation
import Glibc
import QuireProtocol

/// The folder `project/join` makes for a project's files when it does not exist yet.
///
/// Guarantees (helper attack): the folder is made only under a folder of the user's or root's
/// (another user's folder is refused before anything is made: its owner may rename, replace or
/// read whatever is put in it, whatever its mode), and the project's own folder is made with
/// mode 0700 whatever the umask. A project carries no file modes, so a file its host keeps
/// private (0600) arrives under the joiner's umask (0644); in a folder every local user could
/// open, any of them could read the host's text. Folders on the way are made as usual (umask).
/// A folder the person made beforehand is not made here and keeps its mode.
enum JoinFolder {
    /// Makes `directory` (which does not exist) and the missing folders above it; `base` is
    /// the nearest folder above it that exists, links resolved.
    static func make(_ directory: String, under base: String) throws(ResponseError) {
        var info = stat()
        guard stat(base, &info) == 0 else {
            throw .invalidParams("params.directory: \(DisplayText.clean(base, limit: 200)) cannot be reached")
        }
        if info.st_uid != getuid(), info.st_uid != 0 {
            throw .invalidParams("params.directory: \(DisplayText.clean(base, limit: 200)) is a folder of another user (uid \(info.st_uid)), who may rename, replace or read what is made in it; join into a folder of your own")
        }
        let parent = (directory as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot make \(DisplayText.clean(parent, limit: 200)): \(error.localizedDescription)")
        }
        guard mkdir(directory, 0o700) == 0 else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot make \(DisplayText.clean(directory, limit: 200)): \(String(cString: strerror(errno)))")
        }
        // Exactly 0700 (a umask such as 0222 would leave it unwritable), on the folder just made,
        // opened without following a link.
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot open \(DisplayText.clean(directory, limit: 200)): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fchmod(fd, 0o700) == 0 else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot make \(DisplayText.clean(directory, limit: 200)) private: \(String(cString: strerror(errno)))")
        }
    }
}
