import Foundation
import QuireProject
import QuireProtocol

// Projects asked by the editor (`project/share`, `project/join`, `project/list`, `project/stop`;
// protocol/decisions/project-sharing.md). The project service does the work.

extension ProjectShareRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        let folder = root ?? {
            let working = FileManager.default.currentDirectoryPath
            return ProjectRoot.find(from: working) ?? working
        }()
        return try session.daemon.projects.share(root: folder, listen: listen, relay: relay)
    }
}

extension ProjectJoinRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        try session.daemon.projects.join(line: line, directory: directory, via: via, workingDirectory: FileManager.default.currentDirectoryPath)
    }
}

extension ProjectListRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        Result(projects: session.daemon.projects.list())
    }
}

extension ProjectStopRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> NullResult {
        try session.daemon.projects.stop(key: key)
        return NullResult()
    }
}

// Members and roles (protocol/decisions/roles.md).

extension ProjectInviteRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        try session.daemon.projects.invite(self)
    }
}

extension ProjectRoleRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        try session.daemon.projects.setRole(self)
    }
}

extension ProjectRevokeRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        try session.daemon.projects.revoke(self)
    }
}

extension ProjectMembersRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        try session.daemon.projects.members(self)
    }
}
