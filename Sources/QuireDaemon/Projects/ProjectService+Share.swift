import Foundation
import QuireProject
import QuireProtocol

// `project/share` and `project/join`: making a project, its secret, its join line, and the links.
extension ProjectService {
    /// Shares the folder `root` (absolute; its links resolved), or the regular file it names as
    /// a project of one file (`ProjectService+OneFile`): a project with a new secret, or the one
    /// this daemon made for that folder or file before (same secret, same line); scans it,
    /// makes a document per text file, listens on `listen` (default all interfaces, a free port)
    /// and dials `relay`. Throws, sharing nothing, when it cannot be scanned or overlaps a
    /// project shared or joined already.
    func share(root requested: String, listen: [HostPort], relay: HostPort?) throws(ResponseError) -> ProjectShareRequest.Result {
        guard let transport = parts.links.transport else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "This daemon has no network transport")
        }
        guard let resolved = realpath(requested, nil) else {
            throw .invalidParams("params.root: \(DisplayText.clean(requested, limit: 200)) does not exist")
        }
        // A path that is not UTF-8 would read with U+FFFD for its odd bytes: another file's name.
        let resolvedText = String(validatingCString: resolved)
        free(resolved)
        guard let target = resolvedText else {
            throw .invalidParams("params.root: \(DisplayText.clean(requested, limit: 200)) leads to a path that is not UTF-8 text; Quire names files by UTF-8 paths: rename it to share it")
        }
        var info = stat()
        guard stat(target, &info) == 0, info.st_mode & S_IFMT == S_IFDIR || info.st_mode & S_IFMT == S_IFREG else {
            throw .invalidParams("params.root: \(DisplayText.clean(target, limit: 200)) is not a folder or a regular file")
        }
        let isFile = info.st_mode & S_IFMT == S_IFREG
        let (root, file) = isFile ? try oneFile(target) : (target, nil)
        guard root != "/" || file != nil else { throw .invalidParams("params.root: the whole file system cannot be shared") }
        if let data = parts.store?.path, let real = realpath(data, nil) {
            // The data directory holds every project's secret: it is never shared.
            let dataPath = String(cString: real)
            free(real)
            guard !(dataPath + "/").hasPrefix(target + "/"), !target.hasPrefix(dataPath + "/") else {
                throw .invalidParams("params.root: \(DisplayText.clean(target, limit: 200)) \(isFile ? "lies in" : "holds or lies in") this daemon's data directory (\(DisplayText.clean(dataPath, limit: 200))), which is never shared")
            }
        }
        if file == nil, let other = projects.values.first(where: { $0.active && $0.role == .joined && $0.root == root }) {
            throw .invalidParams("params.root: \(DisplayText.clean(root, limit: 200)) holds the project \(DisplayText.clean(other.name)) joined from another daemon; it is shared already")
        }
        try refuseOverlap(root: root, file: file)
        let scan = try scanToShare(root: root, file: file)
        let project: SharedProject
        if let existing = projects.values.first(where: { $0.root == root && $0.file == file && $0.role == .host }) {
            project = existing
            if !project.active { try add(project) }
            try renewStandingLine(of: project)
        } else {
            guard let secret = try? PeerSecret.material(from: PeerSecret.generate()) else { throw .internalError("a new secret does not read back") }
            let key = DocumentScope.projectKey(secret: secret)
            let last = (root as NSString).lastPathComponent
            let name = file?.string ?? (Self.isFolderName(last) ? last : "project")
            project = SharedProject(key: key, name: name, root: root, role: .host, secret: secret,
                                    fingerprint: parts.identity.identity.fingerprint, addresses: [], relay: nil, replica: parts.replica,
                                    file: file)
            // Roles (protocol/decisions/roles.md): this daemon founds the roster, and the line it
            // prints carries a standing write invitation, so the member secret alone admits no one.
            guard let own = ownKey, let standing = try? ProjectInvitation.make(role: .write, once: false, expires: nil, standing: true) else {
                throw .internalError("a new project's roster or invitation cannot be made")
            }
            project.roster = ProjectRoster(projectKey: key, founder: own)
            project.invitations = [standing]
            try add(project)
        }
        importScan(scan, into: project)
        var notices: [String] = []
        if !listen.isEmpty {
            notices = try listenFor(project, on: listen, transport: transport)
        } else if project.listeningPorts.isEmpty, !project.listen.isEmpty {
            notices = try relisten(project, transport: transport)
        } else if project.listeningPorts.isEmpty {
            notices = try listenFor(project, on: [HostPort(host: "0.0.0.0", port: 0)], transport: transport)
        }
        if let relay, project.relay != relay.description {
            project.relay = relay.description
            project.relayDialed = []
        }
        do { try dialRelay(project) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot reach the relay \(DisplayText.clean(project.relay ?? "")): \(error)")
        }
        keep(project)
        let line = try joinLine(of: project)
        logger.info("project \(project.key) (\(DisplayText.clean(project.name))) shared from \(DisplayText.clean(project.shared, limit: 200)): \(project.view.paths.count) files, \(scan.leftOut.count) left out")
        return ProjectShareRequest.Result(
            key: project.key, name: project.name, root: root, line: line, files: project.view.paths.count,
            skipped: scan.leftOut.prefix(1000).map { .init(path: DisplayText.clean($0.path, limit: 300), reason: $0.reason.description) },
            addresses: project.addresses, file: file.map(project.absolute), notices: notices)
    }

    /// A project whose standing line was withdrawn (a member was removed) gets a fresh one when
    /// shared again; one shared before roles whose member secret still admits keeps that line.
    private func renewStandingLine(of project: SharedProject) throws(ResponseError) {
        guard project.roster != nil, !project.memberSecretAdmits, !project.invitations.contains(where: \.standing) else { return }
        guard project.invitations.count < ProjectInvitation.maximumPerProject else {
            throw .invalidParams("project/share: project \(DisplayText.clean(project.name)) has \(ProjectInvitation.maximumPerProject) invitations still good, the most it keeps; its line was withdrawn when a member was removed")
        }
        guard let standing = try? ProjectInvitation.make(role: .write, once: false, expires: nil, standing: true) else {
            throw .internalError("a new standing invitation cannot be made")
        }
        do { try registerInvitation(standing.secret, project.key) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot hold another invitation: \(error)")
        }
        project.invitations.append(standing)
        logger.info("project \(project.key): a fresh standing line")
    }

    /// The line a partner runs to join `project`: its standing invitation's (or, for a project
    /// shared before roles, its member secret's, as it always printed), or `invitation`'s.
    func joinLine(of project: SharedProject, invitation: ProjectInvitation? = nil) throws(ResponseError) -> String {
        let invitation = invitation ?? project.invitations.first(where: \.standing)
        do {
            let addresses = try project.addresses.map { text throws(JoinLineError) in try PeerAddress(text) }
            let relay = try project.relay.map { text throws(JoinLineError) in try PeerAddress(text) }
            return try JoinLine(name: project.name, addresses: addresses, secret: invitation?.secret ?? project.secret,
                                fingerprint: project.fingerprint, relay: relay,
                                projectKey: invitation == nil ? nil : project.key, singleFile: project.file != nil).encoded
        } catch {
            throw .internalError("project \(project.key): its join line cannot be made: \(error)")
        }
    }

    /// Joins the project of `text` (a join line) into `directory` (default: its name under
    /// `workingDirectory`), which must be empty or not exist; dials the line's addresses (or
    /// relay) with its secret, pinned to its fingerprint.
    func join(line text: String, directory requested: String?, via: String? = nil, workingDirectory: String) throws(ResponseError) -> ProjectJoinRequest.Result {
        let line: JoinLine
        do { line = try JoinLine(parsing: text) } catch { throw .invalidParams("params.line: \(error)") }
        guard let transport = parts.links.transport else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "This daemon has no network transport")
        }
        // An invitation's line names the project; an older line's secret is the member secret.
        let key = line.projectKeyText ?? DocumentScope.projectKey(secret: line.secret)
        let redeeming = key != DocumentScope.projectKey(secret: line.secret)
        if let existing = projects[key], existing.active {
            return ProjectJoinRequest.Result(key: key, name: existing.name, directory: existing.root, files: existing.view.paths.count)
        }
        guard requested != nil || !line.name.hasPrefix(".") else {
            // The name comes from the host: `.ssh` or `.config` under a home folder would let it
            // write `authorized_keys` or an autostart entry. A hidden folder must be asked for.
            throw .invalidParams("params.line: the project's name \(DisplayText.clean(line.name)) starts with `.` (a hidden folder); give params.directory to join it")
        }
        if requested == nil, let why = Self.misleadingName(line.name) {
            // The name comes from the host: a folder named to pass for another is not made by default.
            throw .invalidParams("params.line: the project's name \(DisplayText.clean(line.name)) holds \(why); give params.directory to join it")
        }
        let directory = try prepare(requested ?? (workingDirectory + "/" + line.name), reusing: projects[key],
                                    file: line.singleFile ? try? ProjectPath(line.name) : nil)
        let project: SharedProject
        if let existing = projects[key], existing.root == directory {
            project = existing
            if existing.redeeming || existing.removedReason != nil {
                // Joining again (a new invitation): its secret, until the owner sends the member secret.
                project.secret = line.secret
                project.redeeming = redeeming
                project.fingerprint = line.fingerprintText
            }
            project.removedReason = nil
        } else {
            // A file shared by itself: the joined folder holds that one file (named as the project).
            project = SharedProject(key: key, name: line.name, root: directory, role: .joined, secret: line.secret,
                                    fingerprint: line.fingerprintText, addresses: line.addresses.map(\.description),
                                    relay: line.relay?.description, replica: parts.replica,
                                    file: line.singleFile ? try? ProjectPath(line.name) : nil)
            project.redeeming = redeeming
            project.pendingRole = .read   // until the host's roster says otherwise (it comes first on the link)
        }
        project.via = via
        try add(project)
        do { try dial(project, transport: transport) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot connect to \(DisplayText.clean(project.name)): \(error)")
        }
        logger.info("project \(key) (\(DisplayText.clean(project.name))) joined into \(DisplayText.clean(directory, limit: 200))")
        return ProjectJoinRequest.Result(key: key, name: project.name, directory: directory, files: project.view.paths.count)
    }

    /// `path` made ready to hold a joined project: created when missing; an existing folder
    /// must be empty (or be the folder `previous` already joined into); never inside an active
    /// project, nor where another project keeps what this one would (`file`: the project's one
    /// file, nil for a folder). Checked before anything is made; returns it with links resolved.
    private func prepare(_ requested: String, reusing previous: SharedProject?, file: ProjectPath?) throws(ResponseError) -> String {
        var info = stat()
        // A link on the way that another user made (in `/tmp`, say) could send the project's files
        // into any empty folder of the person's (`~/.config/autostart`): not followed. Checked on
        // the path as given (`standardizingPath` resolves links).
        var step = ""
        for component in requested.split(separator: "/") {
            step += "/" + component
            if lstat(step, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, info.st_uid != getuid(), info.st_uid != 0 {
                throw .invalidParams("params.directory: \(DisplayText.clean(step, limit: 200)) is a symbolic link another user (uid \(info.st_uid)) made; Quire does not follow it: join into a folder of your own")
            }
        }
        let path = (requested as NSString).standardizingPath
        // The nearest folder that exists, links resolved, and the rest of the path under it.
        var existing = path, rest: [String] = []
        while lstat(existing, &info) != 0, existing != "/" {
            rest.insert((existing as NSString).lastPathComponent, at: 0)
            existing = (existing as NSString).deletingLastPathComponent
        }
        guard let resolved = realpath(existing, nil) else {
            throw .invalidParams("params.directory: \(DisplayText.clean(path, limit: 200)) cannot be reached")
        }
        let base = String(cString: resolved)
        free(resolved)
        let directory = rest.isEmpty ? base : (base == "/" ? "" : base) + "/" + rest.joined(separator: "/")
        func lies(in other: SharedProject) -> ResponseError {
            .invalidParams("params.directory: \(DisplayText.clean(directory, limit: 200)) lies in the project \(DisplayText.clean(other.name)) (\(DisplayText.clean(other.root, limit: 200)))")
        }
        if let other = project(containing: directory + "/x"), other.root != previous?.root || other.root != directory {
            throw lies(in: other)
        }
        // A project of one file holds one name of its folder: another project joined there (its
        // file not come yet, the folder still empty) must not hold that name too.
        if let other = projects.values.first(where: { $0.active && $0.root == directory && $0.key != previous?.key && (file == nil || $0.file == nil || $0.file == file) }) {
            throw lies(in: other)
        }
        if rest.isEmpty {
            guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw .invalidParams("params.directory: \(DisplayText.clean(directory, limit: 200)) is not a folder")
            }
            // Another user's folder in a folder others may write in (`/tmp`): its owner may put
            // anything in it and read what is written there, and every scan refuses it
            // (`FolderTrust`), so joining would leave the project's files nowhere; said here.
            var parent = stat()
            let trust = FolderTrust()
            if stat((directory as NSString).deletingLastPathComponent, &parent) == 0,
               let refused = trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(parent)) {
                throw .invalidParams("params.directory: \(DisplayText.clean(directory, limit: 200)) is \(refused); join into a folder of your own")
            }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard entries.isEmpty || previous?.root == directory else {
                throw .invalidParams("params.directory: \(DisplayText.clean(directory, limit: 200)) is not empty; join into a new or empty folder")
            }
        } else {
            try JoinFolder.make(directory, under: base)
        }
        return directory
    }

    /// Dials a joined project's host at each address of its line, or its relay.
    func dial(_ project: SharedProject, transport: PeerTransport) throws {
        if let via = project.via {
            try transport.connect(command: Self.peerCommand(via: via), fingerprint: project.fingerprint, scope: project.scope)
            return
        }
        // One link to the host, through the first of its addresses that answers.
        let addresses = try project.addresses.map { text throws in
            let address = try PeerAddress(text)
            return (host: address.host, port: Int(address.port))
        }
        try transport.connect(addresses: addresses, fingerprint: project.fingerprint, scope: project.scope)
        if let relay = project.relay {
            let address = try PeerAddress(relay)
            try transport.connect(relayHost: address.host, port: Int(address.port), fingerprint: project.fingerprint, scope: project.scope)
        }
    }

    /// The command that peers through `via` (`ssh host`) with the Quire running at its far end.
    static func peerCommand(via: String) -> String { via + " quire peer --stdio" }
}
