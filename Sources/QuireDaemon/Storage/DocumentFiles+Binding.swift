import Glibc
import JSON
import ReplicatingTypes

/// The file a document is bound to, kept next to its log: `file.json` and the base state.
extension DocumentFiles {
    // MARK: File binding

    static let bindingName = "file.json"
    static let bindingBaseName = "file-base"

    /// Records `binding` (nil: none): its base state first, then `file.json`, each atomically,
    /// so `file.json` never names a hash whose base is not on disk.
    func writeBinding(_ binding: FileBinding?) throws {
        try requireMade()
        guard let binding else {
            FileSystem.remove(directory + "/" + Self.bindingName)
            FileSystem.remove(directory + "/" + Self.bindingBaseName)
            try FileSystem.syncDirectory(directory)
            return
        }
        try FileSystem.writeAtomically(Self.encodeState(binding.base), to: directory + "/" + Self.bindingBaseName)
        var description: [String: JSONValue] = ["path": .string(binding.path)]
        if let hash = binding.hash { description["sha256"] = .string(hash) }
        description["lineEnding"] = .string(binding.format.crlf ? "crlf" : "lf")
        description["bom"] = .bool(binding.format.bom)
        description["finalNewline"] = .bool(binding.format.finalNewline)
        try FileSystem.writeAtomically(JSONSerializer(sortedKeys: true).serialize(.object(description)), to: directory + "/" + Self.bindingName)
    }

    /// The binding recorded in `directory`, if any; a damaged one is reported and dropped.
    static func readBinding(_ directory: String, replica: ReplicaID) -> (FileBinding?, warning: String?) {
        do {
            guard let bytes = try FileSystem.read(directory + "/" + bindingName) else { return (nil, nil) }
            let description = try JSONParser().parse(bytes)
            guard let path = description["path"]?.stringValue else { throw StorageError("it names no path") }
            let base = try readSnapshot(directory + "/" + bindingBaseName, replica: replica).text
            // A binding recorded before formats were kept reads as `.plain` (written as the text is).
            let format = FileFormat(crlf: description["lineEnding"] == .string("crlf"), bom: description["bom"] == .bool(true),
                                    finalNewline: description["finalNewline"] == .bool(true))
            return (FileBinding(path: path, hash: description["sha256"]?.stringValue, base: base, format: format), nil)
        } catch {
            return (nil, "its file binding is unusable (\(error)); bind the file again")
        }
    }
}
