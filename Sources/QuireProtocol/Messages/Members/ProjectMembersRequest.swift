import JSON

/// `project/members` (editor -> daemon, request): the members of project `key` as this daemon's
/// roster has them: each key's fingerprint, the name it last linked with, its role, whether a
/// link to it is up, and which one is this daemon. Removed members are listed with no role.
public struct ProjectMembersRequest: EditorRequest, Equatable {
    public static let method = "project/members"

    public var key: String

    public init(params: JSONValue?) throws(ResponseError) {
        key = try ProjectKeyParam.read(try ParamsReader(params))
    }

    /// `{members: [...]}`: owners first, then writers, readers and removed keys, by name.
    public struct Result: MessageResult, Equatable {
        public var members: [Member]

        public init(members: [Member]) {
            self.members = members
        }

        public var json: JSONValue { ["members": .array(members.map(\.json))] }
    }

    /// `{fingerprint, name?, role?, online, you}`; `role` absent for a removed key.
    public struct Member: MessageResult, Equatable {
        public var fingerprint: String
        public var name: String?
        public var role: String?
        public var online: Bool
        public var you: Bool

        public init(fingerprint: String, name: String?, role: String?, online: Bool, you: Bool) {
            self.fingerprint = fingerprint
            self.name = name
            self.role = role
            self.online = online
            self.you = you
        }

        public var json: JSONValue {
            var object: [String: JSONValue] = ["fingerprint": .string(fingerprint), "online": .bool(online), "you": .bool(you)]
            if let name { object["name"] = .string(name) }
            if let role { object["role"] = .string(role) }
            return .object(object)
        }
    }
}

/// `project/removed` (daemon -> editor, notification): this daemon was removed from project
/// `key` (`name`) by an owner, or its invitation was refused; `reason` says which, cleaned. Its
/// files and documents stay; nothing new arrives.
public struct ProjectRemovedNotification: DaemonNotification, Equatable {
    public static let method = "project/removed"

    public var key: String
    public var name: String
    public var reason: String

    public init(key: String, name: String, reason: String) {
        self.key = key
        self.name = name
        self.reason = reason
    }

    public var json: JSONValue { ["key": .string(key), "name": .string(name), "reason": .string(reason)] }
}
