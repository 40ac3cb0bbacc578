import Glibc

/// Lists the text files of a project folder that `quire share` shares, with their paths relative
/// to the root, and every file it leaves out with the reason.
///
/// Rules: `.gitignore` files at every level and a `.quireignore` (same syntax, read after the
/// `.gitignore` of its folder) decide what is ignored, as git decides it (an ignored folder is not
/// entered, so nothing under it can be brought back); `.git` is always skipped; ignored paths are
/// neither listed nor reported.
///
/// Guarantees: never follows a symbolic link (links are reported, not read), never opens anything
/// but a regular file or a folder (a FIFO or device cannot block the scan), never reads more than
/// `limits.sniffBytes` of a file; every count is bounded by `limits`, and passing a bound is a
/// `Failure` that says which bound and how to stay under it, not a partial list. In a folder
/// others may write in (`FolderTrust`), another user's file or folder and a file with more than
/// one hard link are left out with the reason, checked again on the opened descriptor.
public struct ProjectScanner: Sendable {
    /// The bounds of one scan.
    public struct Limits: Sendable {
        /// A file larger than this is left out (`.tooLarge`).
        public var fileBytes = 8 << 20
        /// The shared files together may not be larger than this.
        public var totalBytes = 256 << 20
        /// At most this many files are shared.
        public var files = 20_000
        /// At most this many names (files, folders, links, ignored or not) are looked at.
        public var entries = 400_000
        /// Folders deeper than this are left out (`.tooDeep`).
        public var depth = ProjectPath.maximumComponents - 1
        /// A `.gitignore` or `.quireignore` larger than this is an error.
        public var ignoreFileBytes = 1 << 20
        /// How much of each file is read to tell text from binary.
        public var sniffBytes = 8192

        public init() {}
    }

    /// A file to share.
    public struct SharedFile: Sendable, Equatable {
        public var path: ProjectPath
        /// Its size when scanned.
        public var bytes: Int
    }

    /// Why a file is left out.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// A NUL byte in the first block.
        case binary
        /// The first block is not UTF-8.
        case notUTF8
        case tooLarge(bytes: Int)
        case symbolicLink
        /// A FIFO, socket or device.
        case notRegularFile
        /// Its name is not UTF-8 or not a valid project path.
        case unusableName(String)
        /// A folder nested deeper than `Limits.depth`.
        case tooDeep
        case unreadable(String)
        /// A file another user owns, in a folder others may write in (`FolderTrust`): anyone
        /// who may write there could have put it (after the owner's file was deleted).
        case anotherUsersFile(uid: UInt32)
        /// A folder another user owns, in a folder others may write in: they may put anything
        /// in it at any time.
        case anotherUsersFolder(uid: UInt32)
        /// A file with more than one hard link, in a folder others may write in: one may be a
        /// file of the owner's outside the project, linked in by another user.
        case hardLinked(links: Int)

        public var description: String {
            switch self {
            case .binary: return "binary (it has NUL bytes)"
            case .notUTF8: return "not UTF-8 text"
            case .tooLarge(let bytes): return "too large (\(bytes) bytes)"
            case .symbolicLink: return "a symbolic link (links are not followed)"
            case .notRegularFile: return "not a regular file"
            case .unusableName(let why): return "its name cannot be shared: \(why)"
            case .tooDeep: return "nested too deep"
            case .unreadable(let why): return "unreadable: \(why)"
            case .anotherUsersFile(let uid): return "it belongs to another user (uid \(uid)), in a folder others may write in (anyone there could have put it)"
            case .anotherUsersFolder(let uid): return "a folder of another user's (uid \(uid)), in a folder others may write in (they may put anything in it)"
            case .hardLinked(let links): return "it has \(links) hard links, in a folder others may write in (one may be a file of yours outside the project)"
            }
        }
    }

    /// A file or folder left out, with the reason.
    public struct LeftOut: Sendable, Equatable {
        /// The path relative to the root, escaped for showing when its bytes are not UTF-8.
        public var path: String
        public var reason: Reason
    }

    /// What a scan found.
    public struct Result: Sendable {
        /// The files to share, sorted by path.
        public var files: [SharedFile] = []
        /// The files and folders left out, sorted by path.
        public var leftOut: [LeftOut] = []
        /// How many files and folders the ignore rules ruled out (not descended into).
        public var ignored = 0
        /// The shared files' total size.
        public var totalBytes = 0
        /// The folders walked (relative to the root), empty ones too: a file made in one later is
        /// shared, so the daemon watches them all, not only those that held a file.
        public var folders: [String] = []

        /// Nothing found yet.
        public init() {}
    }

    /// Why a scan stopped.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case rootUnreadable(String)
        case tooManyFiles(limit: Int)
        case tooManyEntries(limit: Int)
        case tooManyBytes(limit: Int)
        case ignoreFileTooLarge(String)

        public var description: String {
            switch self {
            case .rootUnreadable(let why): return "cannot read the project folder: \(why)"
            case .tooManyFiles(let limit):
                return "the project has more than \(limit) text files to share; leave some out with a .quireignore (same syntax as .gitignore)"
            case .tooManyEntries(let limit):
                return "the project folder holds more than \(limit) files and folders; leave some out with a .quireignore (same syntax as .gitignore)"
            case .tooManyBytes(let limit):
                return "the project's text files come to more than \(limit >> 20) MiB; leave some out with a .quireignore (same syntax as .gitignore)"
            case .ignoreFileTooLarge(let why): return "an ignore file is too large: \(why)"
            }
        }
    }

    public var limits: Limits
    /// Whose files are taken in folders others may write in.
    public var trust: FolderTrust

    public init(limits: Limits = Limits(), trust: FolderTrust = FolderTrust()) {
        self.limits = limits
        self.trust = trust
    }

    /// The names of the ignore files, read in this order in each folder.
    public static let ignoreFileNames = [".gitignore", ".quireignore"]

    /// Scans the folder at `root`.
    /// - Complexity: O(entries × patterns × path length) at worst.
    public func scan(root: String) throws(Failure) -> Result {
        let rootFD: Int32
        switch Descriptors.openRoot(root, trust: trust) {
        case .success(let fd): rootFD = fd
        case .failure(let error): throw .rootUnreadable("\(ProjectPath.shown(root)): \(error.description)")
        }
        var walk = Walk(limits: limits, trust: trust)
        try walk.visitFolder(fd: rootFD, path: "", rules: IgnoreRules(), depth: 0)
        walk.result.files.sort { $0.path < $1.path }
        walk.result.leftOut.sort { Array($0.path.utf8).lexicographicallyPrecedes($1.path.utf8) }
        return walk.result
    }

    /// Scans the one file `file` of the folder at `root`, as a project of one file sees it
    /// (`quire share FILE`): nothing else in the folder is looked at, no ignore file is read (the
    /// file was named on purpose), and the file is classified by the same rules as in a folder
    /// scan (a link, a special file, binary, too large are left out with the reason). A file
    /// that is not there gives an empty result. In a folder others may write in (`/tmp`), a file
    /// another user owns is left out: anyone there may make the file once the owner's is deleted,
    /// and what they put would reach every member as the owner's change.
    /// - Complexity: O(1) system calls, reading at most `limits.sniffBytes` of the file.
    public func scan(root: String, file: ProjectPath) throws(Failure) -> Result {
        guard file.components.count == 1 else { throw .rootUnreadable("\(ProjectPath.shown(file.string)) is not a name in the folder") }
        let rootFD: Int32
        switch Descriptors.openRoot(root, trust: trust) {
        case .success(let fd): rootFD = fd
        case .failure(let error): throw .rootUnreadable("\(ProjectPath.shown(root)): \(error.description)")
        }
        defer { close(rootFD) }
        var walk = Walk(limits: limits, trust: trust)
        guard let info = Descriptors.linkStatus(file.string, in: rootFD) else {
            if errno != ENOENT { walk.result.leftOut.append(LeftOut(path: file.string, reason: .unreadable(Descriptors.describe(errno)))) }
            return walk.result
        }
        if Descriptors.isLink(info) {
            walk.result.leftOut.append(LeftOut(path: file.string, reason: .symbolicLink))
        } else if !Descriptors.isRegular(info) {
            walk.result.leftOut.append(LeftOut(path: file.string, reason: .notRegularFile))
        } else if let reason = trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: rootFD)) {
            walk.result.leftOut.append(LeftOut(path: file.string, reason: reason))
        } else {
            try walk.visitFile(file.string, in: rootFD, path: file, othersMayWrite: trust.othersMayWrite(fd: rootFD))
        }
        return walk.result
    }

    /// One scan's progress.
    struct Walk {
        let limits: Limits
        let trust: FolderTrust
        var result = Result()
        var entries = 0

        init(limits: Limits, trust: FolderTrust) {
            self.limits = limits
            self.trust = trust
        }

        /// Visits the folder open as `fd` (taken over and closed) at `path` ("" for the root).
        mutating func visitFolder(fd: Int32, path: String, rules: IgnoreRules, depth: Int) throws(Failure) {
            defer { close(fd) }
            let listing: [[UInt8]]
            switch Descriptors.names(inFolder: dup(fd), limit: limits.entries - entries) {
            case nil: throw .tooManyEntries(limit: limits.entries)
            case .failure(let error)?:
                if path.isEmpty { throw .rootUnreadable(error.description) }
                result.leftOut.append(LeftOut(path: path, reason: .unreadable(error.description)))
                return
            case .success(let names)?: listing = names
            }
            entries += listing.count
            guard entries <= limits.entries else { throw .tooManyEntries(limit: limits.entries) }

            var files: [IgnoreFile] = []
            for name in ProjectScanner.ignoreFileNames where listing.contains(Array(name.utf8)) {
                if let file = try readIgnoreFile(name, in: fd, folder: path) { files.append(file) }
            }
            let rules = rules.adding(folder: path, files: files)
            let othersMayWrite = trust.othersMayWrite(fd: fd)

            // A repository's own folder is never a project's: git's, or another system's
            // (whose configuration a partner must not read, nor write: `RepositoryFolders`).
            for rawName in listing where !RepositoryFolders.isLeftOutByScans(Substring(String(decoding: rawName, as: UTF8.self))) {
                let shownPath = Self.joined(path, Self.shownName(rawName))
                guard let name = String(validating: rawName, as: UTF8.self) else {
                    result.leftOut.append(LeftOut(path: shownPath, reason: .unusableName("it is not UTF-8")))
                    continue
                }
                let relative = Self.joined(path, name)
                guard let info = Descriptors.linkStatus(name, in: fd) else {
                    result.leftOut.append(LeftOut(path: shownPath, reason: .unreadable(Descriptors.describe(errno))))
                    continue
                }
                let isFolder = Descriptors.isFolder(info)
                if rules.isIgnored(relative, isDirectory: isFolder) {
                    result.ignored += 1
                    continue
                }
                let projectPath: ProjectPath
                do {
                    projectPath = try ProjectPath(relative)
                } catch {
                    result.leftOut.append(LeftOut(path: shownPath, reason: .unusableName(error.description)))
                    continue
                }
                if Descriptors.isLink(info) {
                    result.leftOut.append(LeftOut(path: relative, reason: .symbolicLink))
                } else if let reason = trust.reasonToRefuse(info, inOpenFolder: othersMayWrite) {
                    result.leftOut.append(LeftOut(path: relative, reason: reason))
                } else if isFolder {
                    guard depth < limits.depth else {
                        result.leftOut.append(LeftOut(path: relative, reason: .tooDeep))
                        continue
                    }
                    switch Descriptors.openFolder(name, in: fd) {
                    case .success(let child):
                        // Checked again as opened: another user's folder swapped in meanwhile is not entered.
                        if let opened = Descriptors.status(child), let reason = trust.reasonToRefuse(opened, inOpenFolder: othersMayWrite) {
                            close(child)
                            result.leftOut.append(LeftOut(path: relative, reason: reason))
                            continue
                        }
                        result.folders.append(relative)
                        try visitFolder(fd: child, path: relative, rules: rules, depth: depth + 1)
                    case .failure(let error): result.leftOut.append(LeftOut(path: relative, reason: .unreadable(error.description)))
                    }
                } else if !Descriptors.isRegular(info) {
                    result.leftOut.append(LeftOut(path: relative, reason: .notRegularFile))
                } else {
                    try visitFile(name, in: fd, path: projectPath, othersMayWrite: othersMayWrite)
                }
            }
        }

        /// Classifies the file `name` in the folder `fd` and lists it or leaves it out; in a
        /// folder `othersMayWrite`, the file as opened must pass `FolderTrust` too.
        mutating func visitFile(_ name: String, in folder: Int32, path: ProjectPath, othersMayWrite: Bool) throws(Failure) {
            let fd: Int32
            switch Descriptors.openFile(name, in: folder) {
            case .success(let opened): fd = opened
            case .failure(let error):
                result.leftOut.append(LeftOut(path: path.string, reason: .unreadable(error.description)))
                return
            }
            defer { close(fd) }
            guard let info = Descriptors.status(fd), Descriptors.isRegular(info) else {
                result.leftOut.append(LeftOut(path: path.string, reason: .notRegularFile))
                return
            }
            if let reason = trust.reasonToRefuse(info, inOpenFolder: othersMayWrite) {
                result.leftOut.append(LeftOut(path: path.string, reason: reason))
                return
            }
            let size = Int(info.st_size)
            guard size <= limits.fileBytes else {
                result.leftOut.append(LeftOut(path: path.string, reason: .tooLarge(bytes: size)))
                return
            }
            switch Descriptors.read(fd, upTo: min(size, limits.sniffBytes)) {
            case .failure(let error):
                result.leftOut.append(LeftOut(path: path.string, reason: .unreadable(error.description)))
                return
            case .success(let head):
                if let reason = TextSniffer.reasonToLeaveOut(head: head, isWholeFile: head.count >= size) {
                    result.leftOut.append(LeftOut(path: path.string, reason: reason))
                    return
                }
            }
            guard result.files.count < limits.files else { throw .tooManyFiles(limit: limits.files) }
            result.totalBytes += size
            guard result.totalBytes <= limits.totalBytes else { throw .tooManyBytes(limit: limits.totalBytes) }
            result.files.append(SharedFile(path: path, bytes: size))
        }

        /// The ignore file `name` in the folder `fd`, nil when it is not a regular file (a link
        /// is not followed, as git does not follow a linked `.gitignore`) or, in a folder others
        /// may write in, `FolderTrust` refuses it: its rules are not the owner's to decide what
        /// of the owner's leaves the machine (a planted `!.env` would share a secret).
        func readIgnoreFile(_ name: String, in fd: Int32, folder: String) throws(Failure) -> IgnoreFile? {
            guard case .success(let file) = Descriptors.openFile(name, in: fd) else { return nil }
            defer { close(file) }
            guard let info = Descriptors.status(file), Descriptors.isRegular(info) else { return nil }
            guard trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: fd)) == nil else { return nil }
            guard case .success(let bytes) = Descriptors.read(file, upTo: limits.ignoreFileBytes + 1) else { return nil }
            let shown = Self.joined(folder, name)
            guard bytes.count <= limits.ignoreFileBytes else {
                throw .ignoreFileTooLarge("\(shown) is larger than \(limits.ignoreFileBytes) bytes")
            }
            do {
                return try IgnoreFile(contents: bytes)
            } catch {
                guard case .ignoreFileTooLarge(let why) = error else { throw error }
                throw .ignoreFileTooLarge("\(shown) \(why)")
            }
        }

        static func joined(_ folder: String, _ name: String) -> String {
            folder.isEmpty ? name : folder + "/" + name
        }

        /// A raw name, with bytes that are not UTF-8 replaced and control characters escaped.
        static func shownName(_ raw: [UInt8]) -> String {
            let text = String(decoding: raw, as: UTF8.self)
            return String(String.UnicodeScalarView(text.unicodeScalars.flatMap { scalar -> [Unicode.Scalar] in
                scalar.value < 0x20 || scalar.value == 0x7F ? Array(scalar.escaped(asASCII: true).unicodeScalars) : [scalar]
            }))
        }
    }
}
