import Foundation
import QuireProject

/// The floor of a join on this disk: the joined tree (same folders, files and bytes) written by
/// one process with nothing else to do, with the durability the project writer keeps: each
/// file's data durable before its rename, the renames and folders durable at the end. Written
/// right after the join, so it meets the same disk (on ext4 without a journal, the inodes freed
/// by the last runs cost each create; see `protocol/decisions/project-files.md`).
enum WriteFloor {
    enum Sync: String {
        /// The writer's way: 64 files written with writeback started, one `syncfs`, renamed.
        case filesystemPerGroup = "syncfs per 64 files"
        /// The writer's way before: the same groups, one `fsync` per file, then each folder once.
        case filePerFile = "fsync per file"
    }

    /// Seconds to write `tree` under `root` (made here) with `sync`.
    static func write(_ tree: [(path: String, data: Data)], under root: String, sync: Sync) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        var folders: [String: Int32] = [:]
        defer { for fd in folders.values { close(fd) } }
        func folder(_ relative: String) throws -> Int32 {
            if let fd = folders[relative] { return fd }
            let path = relative.isEmpty ? root : root + "/" + relative
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                if errno == ENOENT, let slash = relative.lastIndex(of: "/") {
                    _ = try folder(String(relative[..<slash]))
                } else if errno == ENOENT {
                    _ = try folder("")
                }
                guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw BenchError("floor: mkdir \(path): \(errno)") }
            }
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw BenchError("floor: open \(path): \(errno)") }
            folders[relative] = fd
            return fd
        }
        var index = 0
        while index < tree.count {
            let group = tree[index..<min(tree.count, index + 64)]
            index += group.count
            var pending: [(folder: Int32, name: String, fd: Int32)] = []
            for (path, data) in group {
                let slash = path.lastIndex(of: "/")
                let parent = try folder(slash.map { String(path[..<$0]) } ?? "")
                let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
                let fd = openat(parent, ".floor-" + name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw BenchError("floor: create \(path): \(errno)") }
                let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                guard written == data.count else { throw BenchError("floor: write \(path)") }
                FileWriteback.start(fd)
                pending.append((parent, name, fd))
            }
            switch sync {
            case .filesystemPerGroup:
                if let code = FilesystemSync.sync([pending[0].fd]) { throw BenchError("floor: syncfs: \(code)") }
            case .filePerFile:
                for file in pending where fsync(file.fd) != 0 { throw BenchError("floor: fsync: \(errno)") }
            }
            for file in pending {
                close(file.fd)
                guard renameat(file.folder, ".floor-" + file.name, file.folder, file.name) == 0 else { throw BenchError("floor: rename: \(errno)") }
            }
        }
        switch sync {
        case .filesystemPerGroup:
            if let any = folders.values.first, let code = FilesystemSync.sync([any]) { throw BenchError("floor: syncfs: \(code)") }
        case .filePerFile:
            for fd in folders.values where fsync(fd) != 0 { throw BenchError("floor: fsync: \(errno)") }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
