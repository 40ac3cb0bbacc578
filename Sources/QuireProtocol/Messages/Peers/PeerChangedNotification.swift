import JSON

/// `peer/changed` (daemon -> editor, notification): a peer link `joined`, `left` or `failed`,
/// with the peer's `user` (empty when unknown), its `address` and, for `left` and `failed`, the
/// `reason`. `link` 0 stands for several failed attempts told in one summary, or a connection
/// refused before it became a link. `linksUp`: the links established now, for the status line.
/// The client words it.
public struct PeerChangedNotification: DaemonNotification, Equatable {
    public static let method = "peer/changed"

    public var link: Int
    public var event: String
    public var user: String
    public var address: String
    public var reason: String?
    public var linksUp: Int

    public init(link: Int, event: String, user: String, address: String, reason: String?, linksUp: Int) {
        self.link = link
        self.event = event
        self.user = user
        self.address = address
        self.reason = reason
        self.linksUp = linksUp
    }

    public var json: JSONValue {
        var params: [String: JSONValue] = ["link": .integer(Int64(link)), "event": .string(event), "user": .string(user),
                                           "address": .string(address), "linksUp": .integer(Int64(linksUp))]
        if let reason { params["reason"] = .string(reason) }
        return .object(params)
    }
}
