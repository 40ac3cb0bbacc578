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
        let operations = project.tree.operations
        logger.info("peer link \(link.id): project \(key) link up; sending its tree (\(operations.count) files)")
        send(operations, of: project, to: [link])
    }

    func receiveProjectFrame(key: String, payload: [UInt8], from link: any PeerEndpoint) throws {
        guard let project = projects[key], project.active else {
            throw ProjectFrameError(description: "tree operations for project \(key), which this daemon does not share or follow")
        }
        guard link.scope == project.scope else {
            throw ProjectFrameError(description: "tree operations for project \(key) on a link of another scope")
        }
        let operations: [ProjectTree.Operation]
        do { operations = try ProjectTree.Operation.decode(payload) } catch {
            throw ProjectFrameError(description: "project \(key): a tree frame does not decode: \(error)")
        }
        var changed: [ProjectTree.Operation] = []
        for operation in operations {
            do {
                if try project.tree.apply(operation) { changed.append(operation) }
            } catch {
                // Applied so far stays (each operation stands alone); the link is cut.
                if !changed.isEmpty { treeChanged(project, by: changed, except: link) }
                throw ProjectFrameError(description: "project \(key): a tree operation is refused: \(error)")
            }
        }
        guard !changed.isEmpty else { return }
        logger.info("peer link \(link.id): project \(key): \(changed.count) tree changes")
        treeChanged(project, by: changed, except: link)
    }

    /// The tree of `project` changed by `operations` (applied already): they go to every other
    /// link of its scope, the tree is kept and the disk brought up to date.
    func treeChanged(_ project: SharedProject, by operations: [ProjectTree.Operation], except source: (any PeerEndpoint)? = nil) {
        project.treeDirty = true
        send(operations, of: project, to: links(of: project).filter { $0.id != source?.id })
        if schedule == nil { keepTree(project) }
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
