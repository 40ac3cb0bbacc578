import Foundation

/// Where benchmarks leave the folders of their runs instead of removing them: ext4 without a
/// journal (this project's benchmark disk) passes over every inode freed in the last 60 s, or
/// 6 minutes while its inode block is dirty (`recently_deleted`), each time it makes a new one.
/// Removing a run's 10,000 files and store files made the next run's 2,000 creates the join's
/// largest cost (a third of the joiner's CPU in `perf`), so a benchmark would measure its own
/// clean-up, or the one before. Nothing here removes them: the benchmark says where they are, and
/// the person removes them when done (`rm -rf`), not between runs.
enum KeptFolders {
    static var root: String { NSTemporaryDirectory() + "quire-bench-kept" }

    /// Moves `path` into the kept folders (removes it when it cannot).
    static func keep(_ path: String) {
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let target = root + "/" + (path as NSString).lastPathComponent
        if (try? FileManager.default.moveItem(atPath: path, toPath: target)) == nil {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// A line saying what is kept and how to remove it.
    static func notice() -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return "kept: \(names.count) runs' folders under \(root), not removed (removing them would slow the next run's creates for 6 minutes); rm -rf it when done"
    }
}
