import Glibc

/// Who may have put a name in a project folder, and so whether the daemon takes it as its user's.
///
/// A folder that others may write in (group or other write bit, as `/tmp` or a group-writable
/// project folder; or a folder another user owns, who may chmod it at will) may hold names that
/// another user put there: a file of theirs (their text would reach every member as the owner's
/// change), a folder of theirs (they may put anything in it, at any time), or a hard link to a
/// file of the owner's outside the project (its text would go to every member). In such a folder
/// those are left out by the scan, refused by the reader and not written through by the writer.
/// A folder root owns counts as the owner's (root may do anything already); a file counts only
/// when the owner owns it. In a folder only the owner may write in, anything there was put by
/// the owner (or root) and is taken as before.
///
/// `owner` is the daemon's effective user; tests pass another to see the rules without a second
/// user.
public struct FolderTrust: Sendable, Equatable {
    /// The user whose files are shared: the daemon's effective user by default.
    public var owner: UInt32

    public init(owner: UInt32 = geteuid()) {
        self.owner = owner
    }

    /// Whether someone other than the owner (or root) may add, replace or link names in the folder
    /// whose status is `folder`.
    public func othersMayWrite(_ folder: stat) -> Bool {
        folder.st_mode & (S_IWGRP | S_IWOTH) != 0 || (folder.st_uid != owner && folder.st_uid != 0)
    }

    /// Why the entry whose status (not following a link) is `info`, in a folder others may write
    /// in when `inOpenFolder`, is not taken; nil when it may be. Links and special files are
    /// classified elsewhere (never followed, never opened).
    public func reasonToRefuse(_ info: stat, inOpenFolder: Bool) -> ProjectScanner.Reason? {
        guard inOpenFolder else { return nil }
        if Descriptors.isFolder(info) {
            return info.st_uid != owner && info.st_uid != 0 ? .anotherUsersFolder(uid: info.st_uid) : nil
        }
        guard Descriptors.isRegular(info) else { return nil }
        if info.st_uid != owner { return .anotherUsersFile(uid: info.st_uid) }
        if info.st_nlink > 1 { return .hardLinked(links: Int(clamping: info.st_nlink)) }
        return nil
    }

    /// Whether the folder open as `fd` is one others may write in (unknown status counts as yes).
    func othersMayWrite(fd: Int32) -> Bool {
        guard let info = Descriptors.status(fd) else { return true }
        return othersMayWrite(info)
    }
}
