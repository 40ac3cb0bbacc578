import JSON

/// `document/editRefused` (daemon -> editor, notification): an edit the editor sent as a
/// notification (no reply to refuse it in) was refused and is not in document `uri`. `epoch`
/// and `revision` are the edit's; `error` is the error a request would have got. Every later
/// edit of that epoch is refused too: the client resyncs keeping its text (client-contract.md,
/// section 10) and words the refusal itself.
public struct EditRefusedNotification: DaemonNotification, Equatable {
    public static let method = "document/editRefused"

    public var uri: String
    public var epoch: Int
    public var revision: Int
    public var error: ResponseError

    public init(uri: String, epoch: Int, revision: Int, error: ResponseError) {
        self.uri = uri
        self.epoch = epoch
        self.revision = revision
        self.error = error
    }

    public var json: JSONValue {
        ["uri": .string(uri), "epoch": .integer(Int64(epoch)), "revision": .integer(Int64(revision)), "error": error.json]
    }
}
