import QuireProject
import QuireProtocol

// Where a shared project listens for its partners, and listening on the same port again after a
// restart (protocol/decisions/project-sharing.md, *The port across restarts*): the join line given
// out names the port, so a host that picked a free port once (`--listen 127.0.0.1:0`) takes the
// same one again while it is free, and says so; when it is taken, a free one, saying that the
// line changed.
extension ProjectService {
    /// Listens for `project`'s partners on `specs`; its addresses become those the line holds.
    /// A spec with port 0 at a host the project listened on before (kept in its record) takes
    /// that port again when it is free or still this project's. Returns what to tell the person
    /// (also logged): the earlier port taken again, or found taken and replaced.
    @discardableResult
    func listenFor(_ project: SharedProject, on specs: [HostPort], transport: PeerTransport) throws(ResponseError) -> [String] {
        var before = project.listen.compactMap { try? HostPort($0, path: "listen", allowsPortZero: false) }
        let listening = Set(project.listeningPorts)
        var addresses: [String] = []
        var notices: [String] = []
        project.listen = []
        for spec in specs {
            let (port, notice) = try bind(spec, for: project, before: &before, listening: listening, transport: transport)
            if let notice { notices.append(notice) }
            if !project.listeningPorts.contains(port) { project.listeningPorts.append(port) }
            project.listen.append(HostPort(host: spec.host, port: port).description)
            let hosts = spec.host == "0.0.0.0" || spec.host == "::" ? HostAddresses.reachable() : [spec.host]
            addresses += hosts.map { HostPort(host: $0, port: port).description }
        }
        var seen: Set<String> = []
        project.addresses = Array(addresses.filter { seen.insert($0).inserted }.prefix(JoinLine.maximumAddresses))
        return notices
    }

    /// Listens again where `project` listened before (a restart, or sharing again after a
    /// stop): the same ports while they are free, so the line given out stays valid (the same
    /// addresses); a port found taken is replaced by a free one (`listenFor`'s notice). An
    /// address of the record that is not one (damaged: a port out of range, 0, not `host:port`)
    /// is skipped, saying so in the log; with none left, it listens as a new share does.
    @discardableResult
    func relisten(_ project: SharedProject, transport: PeerTransport) throws(ResponseError) -> [String] {
        let specs = project.listen.compactMap { try? HostPort($0, path: "listen", allowsPortZero: false) }
        if specs.count < project.listen.count {
            logger.warning("project \(project.key): \(project.listen.count - specs.count) listening addresses kept for this project are not valid and are skipped")
        }
        guard !specs.isEmpty else { return try listenFor(project, on: [HostPort(host: "0.0.0.0", port: 0)], transport: transport) }
        let addresses = project.addresses
        let notices = try listenFor(project, on: specs.map { HostPort(host: $0.host, port: 0) }, transport: transport)
        if project.listen == specs.map(\.description) { project.addresses = addresses }
        return notices
    }

    /// Shows `notices` (from listening again by itself, which no `project/share` reply carries)
    /// to the editors as warnings (`window/showMessage`, type 2): to those connected now, else to
    /// the next editor that starts (`takeListeningNotices`).
    func tellEditors(_ notices: [String]) {
        guard !notices.isEmpty else { return }
        if parts.sessions.inOrder.isEmpty {
            listeningNotices = Array((listeningNotices + notices).suffix(Self.maximumListeningNotices))
        } else {
            for notice in notices { notifyEditors(ShowMessageNotification(type: .warning, message: notice)) }
        }
    }

    /// The notices kept for the next editor that starts, forgotten once taken.
    func takeListeningNotices() -> [String] {
        defer { listeningNotices = [] }
        return listeningNotices
    }

    /// The port `spec` is listened on for `project`, and what to tell the person about it.
    /// `before`: the earlier ports not taken up yet (each goes to one spec).
    private func bind(_ spec: HostPort, for project: SharedProject, before: inout [HostPort], listening: Set<Int>,
                      transport: PeerTransport) throws(ResponseError) -> (port: Int, notice: String?) {
        guard spec.port == 0, let index = before.firstIndex(where: { $0.host == spec.host }) else {
            return (try listen(spec, for: project, transport: transport), nil)
        }
        let earlier = before.remove(at: index).port
        let shown = HostPort(host: spec.host, port: earlier).description
        if listening.contains(earlier) { return (earlier, nil) }   // still listening there (shared again while running)
        do {
            let port = try transport.listen(host: spec.host, port: earlier, scope: project.scope)
            let notice = "Listening on \(shown) again, the port this project used before: the line given out before still works."
            logger.notice("project \(project.key): \(notice)")
            return (port, notice)
        } catch {
            let port = try listen(spec, for: project, transport: transport)
            let notice = "The port this project used before, \(shown), is taken (\(DisplayText.clean("\(error)", limit: 200))): "
                + "listening on \(HostPort(host: spec.host, port: port)) instead; partners need the new line."
            logger.warning("project \(project.key): \(notice)")
            return (port, notice)
        }
    }

    private func listen(_ spec: HostPort, for project: SharedProject, transport: PeerTransport) throws(ResponseError) -> Int {
        do { return try transport.listen(host: spec.host, port: spec.port, scope: project.scope) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot listen on \(spec): \(error)")
        }
    }
}
