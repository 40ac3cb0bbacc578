import JSON

/// `project/role` (editor -> daemon, request): gives `member` (a name or a key fingerprint, as
/// `project/members` shows them) `role` in project `key`. Only an owner daemon changes roles;
/// the change is signed and reaches every daemon of the project (protocol/decisions/roles.md).
/// Answers the member as it now is (`ProjectMembersRequest.Member`).
public struct ProjectRoleRequest: EditorRequest, Equatable {
    public static let method = "project/role"

    public var key: String
    public var member: String
    public var role: String

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        key = try ProjectKeyParam.read(reader)
        member = try ProjectKeyParam.member(reader)
        role = try ProjectKeyParam.role(reader)
    }

    public typealias Result = ProjectMembersRequest.Member
}

/// `project/revoke` (editor -> daemon, request): removes `member` (a name or a key fingerprint)
/// from project `key`: its links are cut at once on every daemon of the project and it can no
/// longer link or join; it keeps what it already had. Only an owner revokes. Answers the member
/// as it was, its role now absent.
public struct ProjectRevokeRequest: EditorRequest, Equatable {
    public static let method = "project/revoke"

    public var key: String
    public var member: String

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        key = try ProjectKeyParam.read(reader)
        member = try ProjectKeyParam.member(reader)
    }

    public typealias Result = ProjectMembersRequest.Member
}
