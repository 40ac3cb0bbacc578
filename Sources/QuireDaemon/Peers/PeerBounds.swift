import QuireProtocol
import ReplicatingTypes

/// The bounds a peer's frames are checked against before anything of them is allocated, applied,
/// logged or relayed (protocol/peer.md, *Bounds*; `DaemonConfiguration` holds the numbers).
/// What a frame says on its face (names, list sizes, epochs, round IDs) is checked where it is
/// decoded (`PeerMessage`); what operations and states would make a document hold, here.
///
/// A peer that holds the secret may send any bytes; what it can make this daemon hold is bounded
/// here: document names (`DocumentName`) and list sizes, then for operations and states the
/// elements and replicas they add (counted from their counters, not their content, so a run of
/// removed elements or a lying counter costs what it claims) and how far their Lamport counters
/// run ahead of the document's clock. Kept apart from `PeerLink`'s frame handling, which calls
/// these once per frame.
extension PeerSession {
    /// Why applying `operations` to `text` (this daemon's copy; nil when it has none yet) would
    /// take more than a peer may make it hold, or nil.
    /// - Complexity: O(operations + operations waiting in `text` + its replicas)
    func boundsViolation(of operations: [ReplicatingArrayOperation<Unicode.Scalar>], in text: ReplicatingArray<Unicode.Scalar>?,
                         isState: Bool = false) -> String? {
        let array = text ?? ReplicatingArray(replica: daemon.replica)
        return boundsViolation(of: array.growth(from: operations), clock: array.lamportClock, isState: isState)
    }

    /// Why a copy that would grow by `growth` from Lamport clock `clock` breaks a bound, or nil
    /// (`PeerBounds.violation`).
    func boundsViolation(of growth: ReplicatingArrayGrowth, clock: UInt64, isState: Bool = false) -> String? {
        PeerBounds.violation(of: growth, clock: clock, isState: isState, limits: daemon.configuration)
    }

    /// Limits for decoding a peer's whole state (before anything is built for it).
    var stateDecodingLimits: (elements: Int, replicas: Int) {
        (daemon.configuration.maximumElementsPerDocument, daemon.configuration.maximumReplicasPerDocument)
    }

    /// The growth a whole `state` adopted as a new document amounts to.
    static func growth(of state: ReplicatingText) -> ReplicatingArrayGrowth {
        var growth = ReplicatingArrayGrowth()
        for count in state.versionVector.counts.values { growth.totalElements = growth.totalElements.addingReportingOverflow(count).overflow ? .max : growth.totalElements + count }
        growth.newElements = growth.totalElements
        growth.totalReplicas = state.versionVector.counts.count
        growth.newReplicas = growth.totalReplicas
        growth.lamportEnd = state.scalars.lamportClock
        return growth
    }
}

extension PeerSession {
    /// Why the peer's whole `state` of `uri` breaks a bound or its scope's quota
    /// (`PeerSession+Quota`): as a new document (all of it is new), or as the operations this
    /// daemon's copy lacks. Nil when it fits.
    func stateBoundsViolation(_ state: ReplicatingText, uri: String, documentID: UInt64) -> String? {
        let violation: String?
        let local = daemon.document(uri: uri, id: documentID)
        if let local, !local.text.versionVector.counts.isEmpty {
            let array = local.text.scalars
            let growth = array.growth(from: state.operations(since: local.text.versionVector))
            violation = boundsViolation(of: growth, clock: array.lamportClock, isState: true)
                ?? elementQuotaViolation(uri: local.uri, isNew: false, elements: ScopeUsage.storedElements(claimed: growth.totalElements, droppedIn: array))
        } else {
            let growth = Self.growth(of: state)
            violation = boundsViolation(of: growth, clock: 0, isState: true)
                ?? elementQuotaViolation(uri: local?.uri ?? uri, isNew: local == nil,
                                         elements: ScopeUsage.storedElements(claimed: growth.totalElements, droppedIn: state.scalars))
        }
        return violation.map { "state of \(uri): \($0)" }
    }
}

/// The bounds a frame's growth is held to (protocol/peer.md, *Bounds*), as a pure check: what
/// `ReplicatingArray.growth(from:)` says a frame would make a document hold, against the numbers
/// of `DaemonConfiguration`. `PeerLink` checks every operations and state frame with it before
/// anything of the frame is applied; the benchmark measures what that costs.
public enum PeerBounds {
    /// Why a copy that would grow by `growth` from Lamport clock `clock` breaks a bound of
    /// `limits`, or nil. A whole state is one frame but may carry a whole document: it is held to
    /// the document's bounds only.
    /// - Complexity: O(1)
    public static func violation(of growth: ReplicatingArrayGrowth, clock: UInt64, isState: Bool = false,
                                 limits: DaemonConfiguration) -> String? {
        if !isState, growth.newElements > UInt64(limits.maximumNewElementsPerFrame) {
            return "\(growth.newElements) new elements in one frame exceed the limit of \(limits.maximumNewElementsPerFrame)"
        }
        if growth.totalElements > UInt64(limits.maximumElementsPerDocument) {
            return "\(growth.totalElements) elements in one document exceed the limit of \(limits.maximumElementsPerDocument)"
        }
        if !isState, growth.newReplicas > limits.maximumNewReplicasPerFrame {
            return "\(growth.newReplicas) new replicas in one frame exceed the limit of \(limits.maximumNewReplicasPerFrame)"
        }
        if growth.totalReplicas > limits.maximumReplicasPerDocument {
            return "\(growth.totalReplicas) replicas in one document exceed the limit of \(limits.maximumReplicasPerDocument)"
        }
        // Every Lamport counter an honest copy issues is one more element's (a local insertion
        // of n elements takes the n counters after its clock), so its clock never passes the
        // elements the document holds everywhere. The lead is measured from the elements this
        // copy would hold, not from its clock: frames that each run ahead of the clock cannot
        // ratchet it up to the ceiling and wedge the document for every honest peer.
        let (lead, overflow) = growth.totalElements.addingReportingOverflow(limits.maximumLamportLead)
        let ceiling = Swift.min(Swift.max(clock, overflow ? .max : lead), limits.maximumLamportClock)
        if growth.lamportEnd > ceiling {
            return "Lamport counter \(growth.lamportEnd) is beyond what this daemon accepts (its clock is \(clock) and the copy "
                + "would hold \(growth.totalElements) elements; a counter past the clock may be at most \(limits.maximumLamportLead) "
                + "past the elements, never past \(limits.maximumLamportClock))"
        }
        return nil
    }
}

extension PeerSession {
    /// Why applying `operations` to `text` (nil: a copy not made yet) would leave more operations
    /// waiting for what they depend on than a copy may hold (`maximumBufferedOperations`), or
    /// nil. Checked before anything of the frame is applied or logged: a removal range of
    /// elements neither the copy nor the frame's insertions hold waits (one entry per range, so a
    /// 16 MiB frame of ranges over unknown replicas could make millions), and a copy that already
    /// holds more waiting than that takes nothing more, so cut links cannot pile them up across
    /// reconnects. Insertions that wait for an anchor are bounded by the frame (10,000
    /// operations) and by the quota, which counts the elements they claim.
    /// - Complexity: O(operations and their ranges)
    func waitingViolation(of operations: [ReplicatingArrayOperation<Unicode.Scalar>], in text: ReplicatingText?) -> String? {
        let limit = daemon.configuration.maximumBufferedOperations
        var waiting = text?.scalars.pendingOperationCount ?? 0
        if waiting > limit { return "\(waiting) operations already wait for anchors that never arrived (at most \(limit))" }
        var inserted: [ReplicaID: UInt64] = [:]
        for case .insert(let insertion) in operations {
            let (end, overflow) = insertion.id.counter.addingReportingOverflow(UInt64(insertion.count))
            inserted[insertion.id.replica] = Swift.max(inserted[insertion.id.replica] ?? 0, overflow ? .max : end)
        }
        for case .remove(let ranges) in operations {
            for range in ranges where range.count > 0 {
                let replica = range.start.replica
                let held = Swift.max(text?.versionVector[replica] ?? 0, inserted[replica] ?? 0)
                let (end, overflow) = range.start.counter.addingReportingOverflow(range.count)
                guard overflow || end > held else { continue }
                waiting += 1
                if waiting > limit { return "a removal of elements this copy does not hold would make more than \(limit) operations wait" }
            }
        }
        return nil
    }
}
