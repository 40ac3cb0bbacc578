import QuireProtocol

// Roles (protocol/decisions/roles.md): what the daemon does when a project's roster changes.
extension Daemon {
    /// Project `key`'s roles changed (the project service's roster took a change): editors of
    /// its documents learn whether they may still write. (Being built: issue 22.)
    func projectRolesChanged(key: String) {
        logger.info("project \(key): roles changed")
    }
}
