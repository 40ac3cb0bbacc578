import JSON

/// `project/invite` (editor -> daemon, request): makes an invitation to project `key`
/// (protocol/decisions/roles.md): a join line whose secret lets the first key (or, unless
/// `once`, every key) that redeems it into the project with `role` (`read` or `write`; `owner`
/// too). `expiresIn`: seconds until it can no longer be redeemed (1 to 30 days; default never).
/// Only an owner daemon of the project invites. Answers `{line, role, once, expires}`
/// (`expires`: seconds since 1970, or absent).
public struct ProjectInviteRequest: EditorRequest, Equatable {
    public static let method = "project/invite"
    public static let maximumExpiry = 30 * 24 * 3600

    public var key: String
    public var role: String
    public var once: Bool
    public var expiresIn: Int?

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        key = try ProjectKeyParam.read(reader)
        role = try ProjectKeyParam.role(reader)
        once = try reader.optionalBool("once") ?? false
        expiresIn = try reader.optionalInt("expiresIn")
        if let expiresIn, !(1...Self.maximumExpiry).contains(expiresIn) {
            throw .invalidParams("params.expiresIn: 1 to \(Self.maximumExpiry) seconds, got \(expiresIn)")
        }
    }

    public struct Result: MessageResult, Equatable {
        public var line: String
        public var role: String
        public var once: Bool
        public var expires: Int?

        public init(line: String, role: String, once: Bool, expires: Int?) {
            self.line = line
            self.role = role
            self.once = once
            self.expires = expires
        }

        public var json: JSONValue {
            var object: [String: JSONValue] = ["line": .string(line), "role": .string(role), "once": .bool(once)]
            if let expires { object["expires"] = .integer(Int64(expires)) }
            return .object(object)
        }
    }
}
