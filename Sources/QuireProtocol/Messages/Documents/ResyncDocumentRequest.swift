import JSON

/// `document/resync` (editor -> daemon, request): replace the editor's text with the daemon's
/// and start a new epoch. With `text`, what the editor shows, and `epoch` and `revision`, the
/// daemon revision it is at, its changes from what the daemon sent it are merged in first, by
/// identity, so a resync never drops what was typed; `base`, the text the daemon last
/// acknowledged, instead of `epoch` and `revision` is the older fallback, merged as text. The
/// reply is a `DocumentTextResult`.
///
/// Guarantees: `epoch` and `revision` come together; `text` comes with them or with `base`, and
/// neither comes without `text`.
public struct ResyncDocumentRequest: EditorRequest, Equatable {
    public typealias Result = DocumentTextResult
    public static let method = "document/resync"

    public var uri: String
    /// What the editor shows, and the epoch and daemon revision it is at (or, the fallback, the
    /// text the daemon last acknowledged).
    public var text: String?
    public var epoch: Int?
    public var revision: Int?
    public var base: String?

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        text = try reader.optionalString("text")
        epoch = try reader.optionalInt("epoch")
        revision = try reader.optionalInt("revision")
        base = try reader.optionalString("base")
        guard (epoch == nil) == (revision == nil) else { throw .invalidParams("params: epoch and revision go together") }
        if text == nil, base != nil || epoch != nil {
            throw .invalidParams("params.text: missing (base, epoch and revision say what the text is based on)")
        }
        if text != nil, base == nil, epoch == nil {
            throw .invalidParams("params: text needs epoch and revision (or base) to say what it is based on")
        }
    }
}
