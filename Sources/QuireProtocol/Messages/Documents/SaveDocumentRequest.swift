import JSON

/// `document/save` (editor -> daemon, request): write the document's merged text to the file it
/// is bound to (`document/open`'s `file`), atomically. A change made to the file outside Quire
/// since Quire last read or wrote it is first merged in as edits, so neither side is
/// overwritten. The reply says where, the written text's hash, and how many edits came from
/// the file.
public struct SaveDocumentRequest: EditorRequest, Equatable {
    public static let method = "document/save"

    public var uri: String

    public init(params: JSONValue?) throws(ResponseError) {
        uri = try ParamsReader(params).string("uri")
    }

    /// `{uri, path, hash, importedEdits}`.
    public struct Result: MessageResult, Equatable {
        public var uri: String
        public var path: String
        public var hash: String
        public var importedEdits: Int

        public init(uri: String, path: String, hash: String, importedEdits: Int) {
            self.uri = uri
            self.path = path
            self.hash = hash
            self.importedEdits = importedEdits
        }

        public var json: JSONValue {
            ["uri": .string(uri), "path": .string(path), "hash": .string(hash), "importedEdits": .integer(Int64(importedEdits))]
        }
    }
}
