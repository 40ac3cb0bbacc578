import JSON

/// `document/save` (editor -> daemon, request): write the document's merged text to the file it
/// is bound to (`document/open`'s `file`), atomically. A change made to the file outside Quire
/// since Quire last read or wrote it is first merged in as edits, so neither side is
/// overwritten. The reply says where, the written text's hash, and how many edits came from
/// the file.
public struct SaveDocumentRequest: Sendable, Equatable {
    public static let method = "document/save"

    public var uri: String

    public init(params: JSONValue?) throws(ResponseError) {
        uri = try ParamsReader(params).string("uri")
    }

    public static func result(uri: String, path: String, hash: String, imported: Int) -> JSONValue {
        ["uri": .string(uri), "path": .string(path), "hash": .string(hash), "importedEdits": .integer(Int64(imported))]
    }
}

/// `document/saved` (editor -> daemon, notification): the editor wrote its text, as of daemon
/// revision `revision` of `epoch`, to the document's bound file itself (`:w`, `save-buffer`).
/// The daemon takes the file as matching that text, so the next check for changes made outside
/// Quire does not take the editor's own edits for outside ones.
public struct SavedDocumentNotification: Sendable, Equatable {
    public static let method = "document/saved"

    public var uri: String
    public var epoch: Int
    public var revision: Int

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        epoch = try reader.nonNegativeInt("epoch")
        revision = try reader.nonNegativeInt("revision")
    }
}
