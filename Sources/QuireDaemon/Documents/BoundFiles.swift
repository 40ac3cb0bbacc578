import Glibc
import QuireProtocol
import ReplicatingTypes

/// Documents bound to files: binding, merging in changes made to the file outside Quire, saving
/// the merged text atomically, and taking note of an editor's own save.
extension Daemon {
    /// Binds `document` to the file at `path` (absolute). Binding again to the same file merges
    /// what changed in it outside Quire. Throws, binding nothing, when the file cannot be read.
    func bind(_ document: SharedDocument, toFile path: String) throws(ResponseError) {
        if document.file?.path == path {
            try mergeOutsideChanges(of: document)
            return
        }
        _ = try Self.readFile(path)
        recordFile(path, holds: document.text, for: document)
        logger.info("document \(document.uri) bound to \(path)")
    }

    /// Binds `document` to `path` taking the file's present content to be `text`'s (the file
    /// was written by an editor showing it): nothing in it is merged as an outside change.
    func recordFile(_ path: String, holds text: ReplicatingText, for document: SharedDocument) {
        let hash = (try? Self.readFile(path)).flatMap { $0 }.map { TextHash.sha256Hex(bytes: $0) }
        document.file = FileBinding(path: path, hash: hash, base: text)
        store?.record(document.file, forDocument: document.id)
    }

    /// Fails when `path` exists but cannot be read as a file (checked before anything changes).
    static func checkBindable(_ path: String) throws(ResponseError) {
        _ = try readFile(path)
    }

    /// Merges what changed in the bound file since Quire last read or wrote it, as edits of a
    /// replica of its own based on the state the file then held, so that edits made meanwhile
    /// in Quire are kept too. Returns how many edits the file brought.
    @discardableResult
    func mergeOutsideChanges(of document: SharedDocument) throws(ResponseError) -> Int {
        guard var binding = document.file, let bytes = try Self.readFile(binding.path) else { return 0 }
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
        binding.hash = hash
        binding.base = merged
        document.file = binding
        store?.record(binding, forDocument: document.id)
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
        document.file = FileBinding(path: binding.path, hash: hash, base: document.text)
        store?.record(document.file, forDocument: document.id)
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
        document.file = FileBinding(path: path, hash: hash, base: text)
        store?.record(document.file, forDocument: document.id)
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
