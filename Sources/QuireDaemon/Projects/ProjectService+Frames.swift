import QuireProject

/// A frame of tree operations that is refused: the link that sent it is cut with this reason.
struct ProjectFrameError: Error, CustomStringConvertible {
    let description: String
}

// The tree's sync over a project's links (peer frame kind 12, protocol/decisions/project-sharing.md):
// the whole tree when a link comes up, then each change; operations are idempotent and commute,
// so nothing else is needed.
extension ProjectService {
    /// Operations per frame: a whole tree of `ProjectTree.maximumFiles` files goes in several
    /// frames, each well under the peer frame bound (4096 paths of at most 1 KiB each).
    static let operationsPerFrame = min(ProjectTree.Operation.maximumBatch, 4096)

    func projectLinkEstablished(_ link: any PeerEndpoint, key: String) {
        guard let project = projects[key], project.active, link.scope == project.scope else { return }
        guard admit(link, to: project) else { return }   // the roster's word first (protocol/decisions/roles.md)
        let operations = project.tree.operations
        logger.info("peer link \(link.id): project \(key) link up; sending its tree (\(operations.count) files)")
        send(operations, of: project, to: [link])
        sendFormats(of: operations.map(\.file), in: project, to: [link])
    }

    func receiveProjectFrame(key: String, payload: [UInt8], from link: any PeerEndpoint) throws {
        guard let project = projects[key], project.active else {
            throw ProjectFrameError(description: "tree operations for project \(key), which this daemon does not share or follow")
        }
        guard link.scope == project.scope else {
            throw ProjectFrameError(description: "tree operations for project \(key) on a link of another scope")
        }
        if payload.first == ProjectFormats.tag {
            // From a peer whose key may not write: not taken (protocol/decisions/roles.md).
            if link.mayChange("@\(key)", what: "file formats") { try receiveFormats(payload, in: project) }
            return
        }
        if RosterPayload.isRosterPayload(payload) {
            try receiveRosterPayload(payload, in: project, from: link)
            return
        }
        guard link.mayChange("@\(key)", what: "tree operations") else { return }
        let operations: [ProjectTree.Operation]
        do { operations = try ProjectTree.Operation.decode(payload) } catch {
            throw ProjectFrameError(description: "project \(key): a tree frame does not decode: \(error)")
        }
        project.treeHeard = true
        var changed: [ProjectTree.Operation] = []
        var notTaken = 0
        for operation in operations {
            guard project.takes(operation) else { notTaken += 1; continue }
            do {
                if try project.tree.apply(operation) { changed.append(operation) }
            } catch {
                // Applied so far stays (each operation stands alone); the link is cut.
                if !changed.isEmpty { treeChanged(project, by: changed, except: link) }
                throw ProjectFrameError(description: "project \(key): a tree operation is refused: \(error)")
            }
        }
        if notTaken > 0 {
            logger.warning("peer link \(link.id): project \(key): \(notTaken) tree operations naming another path than its one file are not taken")
        }
        guard !changed.isEmpty else { return }
        logger.info("peer link \(link.id): project \(key): \(changed.count) tree changes")
        treeChanged(project, by: changed, except: link)
    }

    /// The tree of `project` changed by `operations` (applied already): they go to every other
    /// link of its scope, the tree is kept and the disk brought up to date.
    func treeChanged(_ project: SharedProject, by operations: [ProjectTree.Operation], except source: (any PeerEndpoint)? = nil) {
        project.treeDirty = true
        let others = links(of: project).filter { $0.id != source?.id }
        send(operations, of: project, to: others)
        sendFormats(of: operations.map(\.file), in: project, to: others)
        if schedule == nil { keepTree(project) }
    }

    /// The format of `file` as this daemon knows it: its bound document's, else what a peer told.
    func format(of file: FileID, in project: SharedProject) -> FileFormat? {
        parts.documents.document(project.uri(of: file))?.file?.format ?? project.formats[file]
    }

    /// Tells `links` the formats of those of `files` that are not plain (`ProjectFormats`).
    private func sendFormats(of files: [FileID], in project: SharedProject, to links: [any PeerEndpoint]) {
        guard !links.isEmpty else { return }
        let formats = files.compactMap { file in format(of: file, in: project).flatMap { $0 == .plain ? nil : (file, $0) } }
        var start = 0
        while start < formats.count {
            let end = min(formats.count, start + Self.operationsPerFrame)
            let payload = ProjectFormats.encode(Array(formats[start..<end]))
            for link in links { link.sendProjectFrame(key: project.key, payload: payload) }
            start = end
        }
    }

    /// Formats a peer told, for files of the tree (others are ignored: the tree comes first).
    private func receiveFormats(_ payload: [UInt8], in project: SharedProject) throws {
        let formats: [(file: FileID, format: FileFormat)]
        do { formats = try ProjectFormats.decode(payload) } catch {
            throw ProjectFrameError(description: "project \(project.key): a file formats frame does not decode: \(error)")
        }
        for (file, format) in formats where project.tree.knows(file) { project.formats[file] = format }
    }

    /// Sends `operations` of `project` to `links`, in frames of at most `operationsPerFrame`.
    func send(_ operations: [ProjectTree.Operation], of project: SharedProject, to links: [any PeerEndpoint]) {
        guard !links.isEmpty else { return }
        var start = 0
        repeat {
            let end = min(operations.count, start + Self.operationsPerFrame)
            let payload = ProjectTree.Operation.encode(Array(operations[start..<end]))
            for link in links { link.sendProjectFrame(key: project.key, payload: payload) }
            start = end
        } while start < operations.count
    }
}
