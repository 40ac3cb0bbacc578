import JSON

/// `document/forked` (daemon -> editor, notification): a peer holds another document named
/// `uri`, created separately from this daemon's (both offline, both with text). Both are kept
/// whole: the peer's as `copy` (`uri#<id in hex>`). `user` is the peer's user name (empty when
/// unknown) and `address` the link's address, to name the peer. The client tells the person that
/// `copy` can be opened, or merged into `uri` with `document/merge`, naming its own commands.
public struct DocumentForkedNotification: DaemonNotification, Equatable {
    public static let method = "document/forked"

    public var uri: String
    public var copy: String
    public var user: String
    public var address: String

    public init(uri: String, copy: String, user: String, address: String) {
        self.uri = uri
        self.copy = copy
        self.user = user
        self.address = address
    }

    public var json: JSONValue {
        ["uri": .string(uri), "copy": .string(copy), "user": .string(user), "address": .string(address)]
    }
}
