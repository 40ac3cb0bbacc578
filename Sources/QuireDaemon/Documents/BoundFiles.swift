import Glibc
import QuireProtocol
import ReplicatingTypes

/// Documents bound to files: binding, merging in changes made to the file outside Quire, saving
/// the merged text atomically, and taking note of an editor's own save.
extension Daemon {
    /// Binds `document` to the file at `path` (absolute), whose present content is `content`
    /// (read by the caller before anything changed; nil: no file yet). Binding again to the same
    /// file merges what changed in it outside Quire. When `writtenByEditor`, the file holds what
    /// the opening editor shows, whose changes arrived another way: nothing in it is merged.
    func bind(_ document: SharedDocument, toFile path: String, content: [UInt8]?, writtenByEditor: Bool = false) throws(ResponseError) {
        if document.file?.path == path && !writtenByEditor {
            try mergeOutsideChanges(of: document, content: content)
            return
        }
        setFile(path, holding: document.text, hash: content.map { TextHash.sha256Hex(bytes: $0) }, of: document)
        logger.info("document \(document.uri) bound to \(path)")
    }

    /// Records that `document`'s file at `path` holds the text of `base` and has `hash`, durably.
    private func setFile(_ path: String, holding base: ReplicatingText, hash: String?, of document: SharedDocument) {
        document.file = FileBinding(path: path, hash: hash, base: base)
        store?.record(document.file, forDocument: document.id)
    }

    /// Merges what changed in the bound file since Quire last read or wrote it, as edits of a
    /// replica of its own based on the state the file then held, so that edits made meanwhile
    /// in Quire are kept too. Returns how many edits the file brought.
    @discardableResult
    func mergeOutsideChanges(of document: SharedDocument) throws(ResponseError) -> Int {
        guard let path = document.file?.path else { return 0 }
        return try mergeOutsideChanges(of: document, content: Self.readFile(path))
    }

    /// The same, with the file's content already read (nil: the file is gone, nothing to merge).
    @discardableResult
    private func mergeOutsideChanges(of document: SharedDocument, content: [UInt8]?) throws(ResponseError) -> Int {
        guard let binding = document.file, let bytes = content else { return 0 }
        let hash = TextHash.sha256Hex(bytes: bytes)
        guard hash != binding.hash else { return 0 }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "\(binding.path) is not UTF-8 text: its change was not merged")
        }
        var merged = binding.base
        merged.replica = makeReplica()
        let edits = TextDiff.edits(from: Array(binding.base.string.unicodeScalars), to: Array(text.unicodeScalars))
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for edit in edits.reversed() { operations += merged.replace(edit.range, with: edit.replacement) }
        contributeFromOutside(operations, to: document)
        setFile(binding.path, holding: merged, hash: hash, of: document)
        logger.info("document \(document.uri): merged \(edits.count) edits made to \(binding.path) outside Quire")
        return edits.count
    }

    /// Merges outside changes, then writes the document's text to its file atomically
    /// (temporary file, fsync, rename, directory fsync), keeping the file's permissions.
    func save(_ document: SharedDocument) throws(ResponseError) -> (path: String, hash: String, imported: Int) {
        guard let binding = document.file else {
            throw .invalidParams("params.uri: \(document.uri) is not bound to a file (open it with params.file)")
        }
        let imported = try mergeOutsideChanges(of: document)
        let bytes = Array(document.text.string.utf8)
        do {
            try FileSystem.writeAtomically(bytes, to: binding.path, mode: FileSystem.permissions(binding.path) ?? 0o644)
        } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot save \(binding.path): \(error)")
        }
        let hash = TextHash.sha256Hex(bytes: bytes)
        setFile(binding.path, holding: document.text, hash: hash, of: document)
        logger.info("document \(document.uri) saved to \(binding.path) (\(bytes.count) bytes)")
        return (binding.path, hash, imported)
    }

    /// An editor wrote `text` (its text at some revision) to the bound file itself: the file
    /// now holds that state, not changes made outside Quire. If the file already holds
    /// something else (changed again before this notice arrived), it is recorded as holding
    /// `text`, so the next check merges the difference.
    func editorSaved(_ document: SharedDocument, text: ReplicatingText) {
        guard let path = document.file?.path else { return }
        let bytes = (try? Self.readFile(path)).flatMap { $0 }
        let written = Array(text.string.utf8)
        let hash = bytes.map { $0 == written ? TextHash.sha256Hex(bytes: $0) : TextHash.sha256Hex(bytes: written) }
        setFile(path, holding: text, hash: hash, of: document)
    }

    /// The bytes of `path`, nil when it does not exist.
    static func readFile(_ path: String) throws(ResponseError) -> [UInt8]? {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw ResponseError(code: ResponseError.unavailableCode, message: "\(path) is not a regular file")
        }
        do { return try FileSystem.read(path) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot read \(path): \(error)")
        }
    }
}
