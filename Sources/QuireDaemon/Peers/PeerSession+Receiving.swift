import QuireProtocol
import ReplicatingTypes

/// What a peer sends of a document's content: its operations and whole states, each validated
/// whole against this daemon's copy and the bounds before any of it goes in.
extension PeerSession {
    /// A document's whole state: taken as the document when this daemon lacks it (or has only an
    /// empty copy no editor shows), merged as the operations it lacks when it has the document.
    func receiveState(uri: String, documentID: UInt64, payload: [UInt8]) {
        let received: ReplicatingText
        do {
            let limits = stateDecodingLimits
            received = try ReplicatingText(decodingState: payload, replica: daemon.replica, maximumElements: limits.elements, maximumReplicas: limits.replicas)
        } catch {
            return cut("undecodable state of \(uri): \(error)")
        }
        if let violation = stateBoundsViolation(received, uri: uri, documentID: documentID) { return cut(violation) }
        guard mayChange(uri, what: "a whole state"), !forgotten(uri) else { return }
        if let local = daemon.document(uri: uri, id: documentID) {
            if let epochs = staleAtPeer[local.uri] {
                if daemon.rebase(local, onto: received, epochs: epochs, from: link) {
                    staleEpochCount -= epochs.count
                    staleAtPeer[local.uri] = nil
                    peerVersions[local.uri] = received.versionVector.counts
                    // Tell every peer where this copy stands now; the others send what it lacks.
                    for link in daemon.links.values where link.state == .established { link.announce(local) }
                }
                return
            }
            if isRetired(in: local) { return }   // its copy is stale here: it must rebase, not we
            if !local.text.versionVector.counts.isEmpty {
                // The same history: only what this copy lacks, as operations.
                let operations = received.operations(since: local.text.versionVector)
                for op in operations {
                    if let problem = local.text.scalars.validationError(for: op) ?? local.contentConflict(op) {
                        return cut("state of \(uri) does not fit this daemon's copy: \(problem)")
                    }
                }
                operationsIn += operations.count
                peerVersions[local.uri] = received.versionVector.counts
                daemon.contribute(operations, to: local, fromPeer: link)
                return
            }
            if daemon.isOpen(local) {
                logger.warning("peer link \(id): not taking the state of \(uri) while an editor shows its empty copy; it comes again on the next link")
                return
            }
        } else if daemon.documents.count >= daemon.configuration.maximumDocuments {
            return cut("more than \(daemon.configuration.maximumDocuments) documents")
        }
        guard let document = daemon.documentForPeer(uri: uri, id: documentID, from: link) else { return }
        peerVersions[document.uri] = received.versionVector.counts
        daemon.adopt(received, into: document, fromPeer: link)
    }

    func receiveOperations(uri: String, documentID: UInt64, payload: [UInt8]) throws {
        let operations: [ReplicatingArrayOperation<Unicode.Scalar>]
        do {
            operations = try ReplicatingArrayCoding.decode(payload, as: Unicode.Scalar.self, maximumOperations: daemon.configuration.maximumOperationsPerFrame)
        } catch {
            return cut("undecodable operations for \(uri): \(error)")
        }
        guard operations.count <= daemon.configuration.maximumOperationsPerFrame else {
            return cut("\(operations.count) operations in one frame exceeds the limit of \(daemon.configuration.maximumOperationsPerFrame)")
        }
        // A deleted file's document not held here: not taken (`forgotten`), nothing of it made.
        if forgotten(uri) { return }
        if daemon.documents[uri] == nil, daemon.documents.count >= daemon.configuration.maximumDocuments {
            return cut("more than \(daemon.configuration.maximumDocuments) documents")
        }
        var removed: UInt64 = 0
        for case .remove(let ranges) in operations { for range in ranges { removed &+= range.count } }
        guard removed <= 1 << 32 else { return cut("a removal of \(removed) elements is not a real edit") }
        let local = daemon.document(uri: uri, id: documentID)
        let array = local?.text.scalars ?? ReplicatingArray(replica: daemon.replica)
        let growth = array.growth(from: operations)
        if let violation = boundsViolation(of: growth, clock: array.lamportClock) {
            return cut("operations of \(uri): \(violation)")
        }
        guard mayChange(uri, what: "operations") else { return }
        if let violation = elementQuotaViolation(uri: local?.uri ?? uri, isNew: local == nil,
                                                  elements: ScopeUsage.storedElements(claimed: growth.totalElements, droppedIn: array))
            ?? waitingViolation(of: operations, in: local?.text) {
            return cut("operations of \(uri): \(violation)")
        }
        guard let document = daemon.documentForPeer(uri: uri, id: documentID, from: link) else { return }
        if isRetired(in: document) {
            // A copy that predates a retiring round: what it sends may be anchored to dropped elements.
            logger.info("peer link \(id): operations of \(uri) ignored until the peer rebases its copy")
            return
        }
        for op in operations {
            if let problem = document.text.scalars.validationError(for: op) ?? document.contentConflict(op) {
                return cut("invalid operation for \(uri): \(problem)")
            }
        }
        // Against what the earlier operations of the frame add, before any of it is applied.
        if let problem = BatchConsistency.problem(in: operations) { return cut("invalid operation for \(uri): \(problem)") }
        operationsIn += operations.count
        notePeerHas(operations, of: document.uri)
        daemon.contribute(operations, to: document, fromPeer: link)
        if document.text.scalars.pendingOperationCount > daemon.configuration.maximumBufferedOperations {
            cut("more than \(daemon.configuration.maximumBufferedOperations) operations of \(uri) wait for anchors that never arrived")
        }
    }
}
