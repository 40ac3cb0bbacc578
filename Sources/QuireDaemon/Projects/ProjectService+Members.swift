import QuireProject
import QuireProtocol

// A project's members and roles (protocol/decisions/roles.md): invitations, role changes,
// revocation and the member list. (Being built: issue 22.)
extension ProjectService {
    func invite(_ request: ProjectInviteRequest) throws(ResponseError) -> ProjectInviteRequest.Result {
        throw .invalidParams("project/invite: not built yet")
    }

    func setRole(_ request: ProjectRoleRequest) throws(ResponseError) -> ProjectRoleRequest.Result {
        throw .invalidParams("project/role: not built yet")
    }

    func revoke(_ request: ProjectRevokeRequest) throws(ResponseError) -> ProjectRevokeRequest.Result {
        throw .invalidParams("project/revoke: not built yet")
    }

    func members(_ request: ProjectMembersRequest) throws(ResponseError) -> ProjectMembersRequest.Result {
        throw .invalidParams("project/members: not built yet")
    }
}

// Until the roster is carried and kept (issue 22, being built): every member of an active
// project writes, and this daemon owns what it shares.
extension ProjectService: ProjectAccess {
    func role(ofPeerKey peerKey: [UInt8], inProject projectKey: String) -> ProjectRole? {
        guard let project = projects[projectKey], project.active else { return nil }
        return .write
    }

    func ownRole(inProject projectKey: String) -> ProjectRole? {
        guard let project = projects[projectKey] else { return nil }
        return project.role == .host ? .owner : .write
    }
}
