import Glibc
import QuireProtocol
import ReplicatingTypes

import Logging

/// Documents bound to files: binding, merging in changes made to the file outside Quire, saving
/// the merged text atomically, and taking note of an editor's own save. A file's line endings,
/// BOM and final newline are its binding's `FileFormat`: read and compared as the text editors
/// show, written back as the file had them. Peer traffic never writes files.
/// May call: the store, the operation path (`OperationSink`: what changed in a file goes in as
/// edits from outside) and the replica source.
final class FileBinder {
    private let logger: Logger
    private let store: DocumentStore?
    private unowned let sink: any OperationSink
    private let replicas: ReplicaLender
    /// How a bound file is read when nothing read it yet: by path (`readFile`) unless the daemon
    /// says otherwise (a file of a project: through the project's walk from its root, so a link
    /// planted on its way is not followed, `ProjectService.readForEditor`).
    var readBoundFile: (String) throws(ResponseError) -> [UInt8]? = { path throws(ResponseError) in try FileBinder.readFile(path) }

    init(logger: Logger, store: DocumentStore?, operations: any OperationSink, replicas: ReplicaLender) {
        self.logger = logger
        self.store = store
        self.sink = operations
        self.replicas = replicas
    }

    /// The replica to edit `copy` of `document` as (`ReplicaLender`).
    private func replica(forEditing copy: ReplicatingText?, of document: SharedDocument) -> ReplicaID {
        replicas.replica(forEditing: copy, of: document)
    }

    /// Binds `document` to the file at `path` (absolute), whose present content is `content`
    /// (read by the caller before anything changed; nil: no file yet). Binding again to the same
    /// file merges what changed in it outside Quire. When `writtenByEditor`, the file holds what
    /// the opening editor shows, whose changes arrived another way: nothing in it is merged;
    /// `holding` is the document's state the file holds when it is not the document's text now
    /// (a project file written from an earlier revision while the document changed).
    func bind(_ document: SharedDocument, toFile path: String, content: [UInt8]?, writtenByEditor: Bool = false,
              holding base: ReplicatingText? = nil) throws(ResponseError) {
        if document.file?.path == path && !writtenByEditor {
            try mergeOutsideChanges(of: document, content: content)
            return
        }
        let format = content.flatMap(FileFormat.decode)?.format ?? .plain
        setFile(path, holding: base ?? document.text, hash: content.map { TextHash.sha256Hex(bytes: $0) }, format: format, of: document)
        logger.info("document \(document.uri) bound to \(path)\(format == .plain ? "" : " (\(format.crlf ? "CRLF" : "LF")\(format.bom ? ", BOM" : "")\(format.finalNewline ? "" : ", no final newline"))")")
    }

    /// Names `document`'s bound file by `path`, another path to the same file (a project's own
    /// path for one reached through a link or `..`), its base, hash and format kept; durably.
    func rename(_ document: SharedDocument, toPath path: String) {
        guard let binding = document.file, binding.path != path else { return }
        setFile(path, holding: binding.base, hash: binding.hash, format: binding.format, of: document)
    }

    /// Records that `document`'s file at `path` holds the text of `base` in `format` and has
    /// `hash`, durably.
    private func setFile(_ path: String, holding base: ReplicatingText, hash: String?, format: FileFormat, of document: SharedDocument) {
        document.file = FileBinding(path: path, hash: hash, base: base, format: format)
        // A base that is the document's text (the file was just written or read whole, the
        // common case) is not copied into the record: recovery takes the text logged before it.
        store?.record(document.file, forDocument: document.id, baseIsText: base == document.text)
    }

    /// Merges what changed in the bound file since Quire last read or wrote it, as edits of a
    /// replica of its own based on the state the file then held, so that edits made meanwhile
    /// in Quire are kept too. Returns how many edits the file brought. Throws (the file stays
    /// unmerged, nothing changes) when it cannot be read, or holds more than the document has
    /// room for (`documentTooLarge`).
    @discardableResult
    func mergeOutsideChanges(of document: SharedDocument) throws(ResponseError) -> Int {
        guard let path = document.file?.path else { return 0 }
        return try mergeOutsideChanges(of: document, content: readBoundFile(path))
    }

    /// The same, with the file's content already read (nil: the file is gone, nothing to merge):
    /// a project's scan passes what it read without following links, so a link swapped in at
    /// the path meanwhile is never read through.
    @discardableResult
    func mergeOutsideChanges(of document: SharedDocument, content: [UInt8]?) throws(ResponseError) -> Int {
        guard let binding = document.file, let bytes = content else { return 0 }
        let hash = TextHash.sha256Hex(bytes: bytes)
        guard hash != binding.hash else { return 0 }
        guard let (fileText, format) = FileFormat.decode(bytes) else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "\(binding.path) is not UTF-8 text: its change was not merged")
        }
        // Like with like: the file's text as editors show it, against the text Quire knows.
        let current = document.text.string
        if FileFormat.comparable(fileText, to: current) == current {
            // The file holds what the document holds (an editor wrote it, or only the file's
            // format changed): nothing to merge.
            setFile(binding.path, holding: document.text, hash: hash, format: format, of: document)
            return 0
        }
        let baseText = binding.base.string
        let text = FileFormat.comparable(fileText, to: baseText)
        guard document.text.versionVector.dominates(binding.base.versionVector) else {
            // The base belongs to a history this copy left (it rebased onto a peer's state, and
            // peer traffic never writes files): what the file changed is merged as text.
            var scratch = document.text
            scratch.replica = replica(forEditing: nil, of: document)
            let edits = TextMerge.edits(base: Array(baseText.unicodeScalars), current: Array(current.unicodeScalars),
                                        incoming: Array(text.unicodeScalars))
            var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            for edit in edits.reversed() where edit.range.upperBound <= scratch.count { operations += scratch.replaceInPlace(edit.range, with: edit.replacement) }
            try sink.contributeFromOutside(operations, to: document)
            setFile(binding.path, holding: document.text, hash: hash, format: format, of: document)
            logger.info("document \(document.uri): merged \(edits.count) edits made to \(binding.path) outside Quire, as text")
            return edits.count
        }
        var merged = binding.base
        merged.replica = replica(forEditing: binding.base, of: document)
        let edits = TextDiff.edits(from: Array(baseText.unicodeScalars), to: Array(text.unicodeScalars))
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for edit in edits.reversed() { operations += merged.replaceInPlace(edit.range, with: edit.replacement) }
        try sink.contributeFromOutside(operations, to: document)
        setFile(binding.path, holding: merged, hash: hash, format: format, of: document)
        logger.info("document \(document.uri): merged \(edits.count) edits made to \(binding.path) outside Quire")
        return edits.count
    }

    /// Merges outside changes, then writes the document's text to its file atomically
    /// (temporary file, fsync, rename, directory fsync), keeping the file's permissions and
    /// format. The hash returned is that of the document's text (what editors compare with
    /// their own); the binding keeps the hash of the bytes written.
    func save(_ document: SharedDocument) throws(ResponseError) -> (path: String, hash: String, imported: Int) {
        guard let binding = document.file else {
            throw .invalidParams("params.uri: \(document.uri) is not bound to a file (open it with params.file)")
        }
        let imported = try mergeOutsideChanges(of: document)
        // What stands at the path now, not followed: a symbolic link put there since the file
        // was bound is neither followed nor replaced (the merge above refuses it too).
        var info = stat()
        let exists = lstat(binding.path, &info) == 0
        if exists, info.st_mode & S_IFMT != S_IFREG {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot save \(binding.path): it is no longer a regular file")
        }
        // The file's permissions and group (a new file would get the user's primary group:
        // `users`, everyone, on many systems), never its set-user or set-group bits.
        let mode = exists ? info.st_mode & 0o777 : 0o644
        let format = document.file?.format ?? binding.format
        let text = document.text.string
        let bytes = format.encode(text)
        do {
            try FileSystem.writeAtomically(bytes, to: binding.path, mode: mode, group: exists ? info.st_gid : nil)
        } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot save \(binding.path): \(error)")
        }
        setFile(binding.path, holding: document.text, hash: TextHash.sha256Hex(bytes: bytes), format: format, of: document)
        logger.info("document \(document.uri) saved to \(binding.path) (\(bytes.count) bytes)")
        return (binding.path, TextHash.sha256Hex(text), imported)
    }

    /// An editor wrote `text` (its text at some revision) to the bound file itself: the file
    /// now holds that state, not changes made outside Quire. If the file already holds
    /// something else (changed again before this notice arrived), it is recorded as holding
    /// `text`, so the next check merges the difference. The file is compared as text (its own
    /// line endings, BOM and a final newline the editor added are its format, kept from now on).
    func editorSaved(_ document: SharedDocument, text: ReplicatingText) {
        guard let binding = document.file else { return }
        let saved = text.string
        let bytes = (try? readBoundFile(binding.path)).flatMap { $0 }
        guard let bytes else {
            setFile(binding.path, holding: text, hash: nil, format: binding.format, of: document)
            return
        }
        if let (fileText, format) = FileFormat.decode(bytes), FileFormat.comparable(fileText, to: saved) == saved {
            setFile(binding.path, holding: text, hash: TextHash.sha256Hex(bytes: bytes), format: format, of: document)
        } else {
            // Changed again since: recorded as holding `text`, under a hash the file does not have.
            let written = binding.format.encode(saved)
            setFile(binding.path, holding: text, hash: TextHash.sha256Hex(bytes: written), format: binding.format, of: document)
        }
    }

    /// The most bytes of a file read for an editor or a binding: no document holds more than
    /// `DaemonConfiguration.maximumElementsPerDocument` characters, each at most four bytes of
    /// UTF-8, so a larger file (a byte-order mark aside) can never be one; it is refused before
    /// anything is allocated for it (a sparse file may say it holds a terabyte).
    static let maximumFileBytes = 4 * DaemonConfiguration().maximumElementsPerDocument + 4

    /// The bytes of the bound file `path`, nil when it does not exist, refused past `maximumFileBytes`. A symbolic link or
    /// anything but a regular file is refused (`FileSystem.readUserFile`: read with
    /// `O_NOFOLLOW`, so a link planted in place of a bound file is never followed).
    static func readFile(_ path: String) throws(ResponseError) -> [UInt8]? {
        do { return try FileSystem.readUserFile(path, limit: maximumFileBytes) } catch {
            let reason = "\(error)"
            throw ResponseError(code: ResponseError.unavailableCode,
                                message: reason.hasPrefix(path) ? reason : "Cannot read \(path): \(reason)")
        }
    }
}
