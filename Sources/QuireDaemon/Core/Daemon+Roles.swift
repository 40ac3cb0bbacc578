import QuireProtocol

// Roles (protocol/decisions/roles.md): what the daemon does when a project's roster changes.
extension Daemon {
    /// Project `key`'s roles changed (the project service's roster took a change): every editor
    /// view of its documents whose writability changed is told (`document/readOnly`); what
    /// peers may do is asked of the roster at each frame (`ProjectWriteRule`), so it needs nothing.
    func projectRolesChanged(key: String) {
        logger.info("project \(key): roles changed")
        for session in sessionRegistry.inOrder { session.projectRolesChanged(key: key) }
    }
}
