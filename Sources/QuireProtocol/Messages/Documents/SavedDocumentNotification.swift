import JSON

/// `document/saved` (editor -> daemon, notification): the editor wrote its text, as of daemon
/// revision `revision` of `epoch`, to the document's bound file itself (`:w`, `save-buffer`).
/// The daemon takes the file as matching that text, so the next check for changes made outside
/// Quire does not take the editor's own edits for outside ones.
public struct SavedDocumentNotification: EditorNotification, Equatable {
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
