import Glibc

// How `DiskProject.perform` makes a pass's writes durable: a file's data before its rename, and
// the renames (and new folders) before `perform` returns.
extension DiskProject {
    /// How `perform` makes its writes durable, and the renames still to make durable: in a pass
    /// synced together, one folder descriptor per filesystem renamed into (synced once at the end).
    struct Durability {
        let together: Bool
        /// Told each step (tests check the order).
        var observe: (@Sendable (DurabilityStep) -> Void)?
        var unsyncedFilesystems: [UInt64: Int32] = [:]
        /// In a pass not synced together: the folders a file was moved or removed in, each with
        /// a descriptor and the path of one such file (synced once, at `finish`).
        var unsyncedFolders: [FolderKey: (fd: Int32, path: ProjectPath)] = [:]
        /// The files written so far, as synced (`perform` returns them).
        var written: [ProjectPath: WrittenFile] = [:]

        /// Makes the data of `pending` durable (before their renames); the errno of a failure.
        func syncData(_ pending: [PendingWrite]) -> Int32? {
            observe?(.dataSynced(pending.map(\.path), together: together))
            if together { return FilesystemSync.sync(pending.map(\.fd)) }
            for write in pending where fsync(write.fd) != 0 { return errno }
            return nil
        }

        /// Makes the renames of `renamed` durable: in a pass synced together, remembered for
        /// `finish` (the next group's sync covers them too); otherwise each folder synced once now.
        mutating func syncRenames(_ renamed: ArraySlice<PendingWrite>) -> Int32? {
            var seen: Set<FolderKey> = []
            for write in renamed {
                var info = stat()
                guard fstat(write.folder, &info) == 0 else { return errno }
                if together {
                    let device = UInt64(info.st_dev)
                    if unsyncedFilesystems[device] == nil {
                        let copy = dup(write.folder)
                        guard copy >= 0 else { return errno }
                        unsyncedFilesystems[device] = copy
                    }
                } else if seen.insert(FolderKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))).inserted {
                    observe?(.folderSynced(write.path))
                    if fsync(write.folder) != 0 { return errno }
                }
            }
            return nil
        }

        /// A file of `folder` was moved or removed (`path`): its folder is synced at `finish`
        /// (in a pass synced together, its filesystem); the errno of a failure.
        mutating func noteChanged(_ folder: Int32, _ path: ProjectPath) -> Int32? {
            var info = stat()
            guard fstat(folder, &info) == 0 else { return errno }
            if together {
                let device = UInt64(info.st_dev)
                guard unsyncedFilesystems[device] == nil else { return nil }
                let copy = dup(folder)
                guard copy >= 0 else { return errno }
                unsyncedFilesystems[device] = copy
            } else {
                let key = FolderKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                guard unsyncedFolders[key] == nil else { return nil }
                let copy = dup(folder)
                guard copy >= 0 else { return errno }
                unsyncedFolders[key] = (copy, path)
            }
            return nil
        }

        /// Syncs the filesystems renamed into since the last sync, and the folders a file was
        /// moved or removed in; the errno of a failure.
        mutating func finish() -> Int32? {
            defer { close() }
            for (_, folder) in unsyncedFolders.sorted(by: { $0.value.path < $1.value.path }) {
                observe?(.folderSynced(folder.path))
                if fsync(folder.fd) != 0 { return errno }
            }
            guard !unsyncedFilesystems.isEmpty else { return nil }
            observe?(.filesystemsSynced(unsyncedFilesystems.count))
            return FilesystemSync.sync(Array(unsyncedFilesystems.values))
        }

        mutating func close() {
            for fd in unsyncedFilesystems.values { Glibc.close(fd) }
            for folder in unsyncedFolders.values { Glibc.close(folder.fd) }
            unsyncedFilesystems = [:]
            unsyncedFolders = [:]
        }
    }

    /// A step `perform` takes to make its writes durable, in order (for tests).
    public enum DurabilityStep: Equatable, Sendable {
        /// The data of these files (under their temporary names), one filesystem sync for all
        /// when `together`, else one sync each.
        case dataSynced([ProjectPath], together: Bool)
        /// A file renamed into place.
        case renamed(ProjectPath)
        /// The folder `path` was renamed into (or moved or removed from), synced (a pass not
        /// synced together).
        case folderSynced(ProjectPath)
        /// The filesystems renamed into, one sync each (a pass synced together, at its end).
        case filesystemsSynced(Int)
    }

    /// A folder, whichever descriptor opened it.
    struct FolderKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }
}
