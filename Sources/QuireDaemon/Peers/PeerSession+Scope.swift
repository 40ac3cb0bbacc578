import QuireProtocol

/// A link carries one scope (protocol/peer.md, *Which documents*;
/// protocol/decisions/project-sharing.md): it lists, announces and sends operations, states,
/// presence, digests and stability rounds only for documents of the scope of the secret it was
/// made with, and project frames only for that project. A peer naming anything else is cut: an
/// honest peer never does.
extension PeerSession {
    /// Whether this link carries the document named `uri` (never before its scope is known).
    func carries(_ uri: String) -> Bool {
        link.scope?.contains(uri: uri) ?? false
    }

    /// Why `message` from the peer falls outside this link's scope, or nil.
    func scopeViolation(of message: PeerMessage) -> String? {
        guard let scope = link.scope else { return "a frame before the link's scope is known" }
        if case .project(let key, _) = message, scope != .project(key: key) {
            return "a project frame for project \(key) on a link of \(scope)"
        }
        guard let outside = message.documentNames.first(where: { !scope.contains(uri: $0) }) else { return nil }
        return "a frame naming \"\(DocumentName.displayed(outside))\", a document outside this link's scope (\(scope))"
    }

    /// Project `key`'s tree operations from the peer (already checked against the link's scope):
    /// to the project service; its refusal cuts the link.
    func receiveProject(key: String, payload: [UInt8]) {
        guard let projects = daemon.projectFrames else {
            logger.warning("peer link \(id): project frame for \(key) dropped: no project service runs here")
            return
        }
        do {
            try projects.receiveProjectFrame(key: key, payload: payload, from: link)
        } catch {
            cut("project \(key): \(error)")
        }
    }

    /// Sends project `key`'s tree operations (`ProjectTreeCoding`), only on an established link
    /// of that project's scope and only when the frame fits the peer frame limit.
    func sendProjectFrame(key: String, payload: [UInt8]) {
        guard state == .established, link.scope == .project(key: key) else { return }
        // Kind, a varint of at most 10 bytes and the key, the payload; the length prefix and tag.
        let bytes = 1 + 10 + key.utf8.count + payload.count + 4 + FrameOpener.tagBytes
        guard bytes <= daemon.configuration.maximumPeerFrameBytes else {
            logger.error("peer link \(id): a project frame of \(bytes) bytes for \(key) exceeds the limit of \(daemon.configuration.maximumPeerFrameBytes); not sent")
            return
        }
        send(.project(key: key, payload: payload))
    }
}
