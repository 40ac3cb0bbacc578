/// The document-order state format (state format 2), for arrays that dropped tombstones.
///
/// Format 1 (`ReplicatingArrayCoding`, a batch of operations) re-derives the order by replaying
/// insertions, which needs every anchor. Once tombstones are compacted away, some runs are
/// anchored to elements that no longer exist, so the state is written as its runs in document
/// order: version byte 2, the replica table with each replica's known count, then every stored run
/// (replica, counter, Lamport counter, anchor, length, tombstone flag, content). Decoding checks
/// what it can: counters known and used once, anchors known and either stored earlier with a
/// smaller Lamport counter or compacted away.
///
/// Format 3 is format 2 (version byte 3) followed by the operations still waiting in the array
/// for the elements they refer to, as one format-1 batch (`ReplicatingArrayCoding`) that runs to
/// the end of the bytes. It is written only when something waits, so a state without waiting
/// operations stays format 2, readable by builds that know only formats 1 and 2.
enum ReplicatingArrayOrderedState {
    static let version: UInt8 = 2
    static let versionWithWaiting: UInt8 = 3

    /// Whether `bytes` start like a format-2 or format-3 state.
    static func isOrdered(_ bytes: [UInt8]) -> Bool {
        bytes.first == version || bytes.first == versionWithWaiting
    }

    /// The insertions and removals waiting in `storage` for elements it lacks, as operations:
    /// waiting insertions in arrival order, then one removal of every waiting range (sorted).
    static func waitingOperations<Element>(of s: ReplicatingArrayStorage<Element>) -> [ReplicatingArrayOperation<Element>] {
        var operations = s.pendingInsertions.map { ReplicatingArrayOperation.insert($0) }
        var removed: [ElementIDRange] = []
        for (replica, ranges) in s.pendingRemovals {
            removed.append(contentsOf: ranges.map { ElementIDRange(start: ElementID(replica: replica, counter: $0.lowerBound), count: UInt64($0.count)) })
        }
        if !removed.isEmpty { operations.append(.remove(ElementIDRanges(ReplicatingArray<Element>.coalesced(removed)))) }
        return operations
    }

    enum AnchorForm: UInt8 { case start = 0, previousOfSameReplica = 1, other = 2 }

    static func encode<Element: ReplicatingElementCodable>(_ array: ReplicatingArray<Element>) -> [UInt8] {
        let s = array.storage
        let waiting = waitingOperations(of: s)
        var w = BinaryWriter()
        w.write(waiting.isEmpty ? version : versionWithWaiting)
        w.writeVarint(UInt64(s.replicas.count))
        for (i, replica) in s.replicas.enumerated() {
            w.writeVarint(replica.rawValue)
            w.writeVarint(UInt64(s.idIndex[i].count))
        }
        var runCount = 0
        var leaf: Int? = ReplicatingArrayStorage<Element>.firstLeaf
        while let l = leaf {
            runCount += s.runs(of: l).count
            leaf = s.leaf(after: l)
        }
        w.writeVarint(UInt64(runCount))
        leaf = ReplicatingArrayStorage<Element>.firstLeaf
        while let l = leaf {
            var contentIndex = 0
            for run in s.runs(of: l) {
                let form: AnchorForm
                if run.anchorReplica == ReplicatingArrayStorage<Element>.noReplica {
                    form = .start
                } else if run.anchorReplica == run.replica, run.anchorCounter &+ 1 == run.counter {
                    form = .previousOfSameReplica
                } else {
                    form = .other
                }
                w.write((run.isDeleted ? 1 : 0) | form.rawValue << 1)
                w.writeVarint(UInt64(run.replica))
                w.writeVarint(run.counter)
                w.writeVarint(run.lamport)
                if form == .other {
                    w.writeVarint(UInt64(run.anchorReplica))
                    w.writeVarint(run.anchorCounter)
                }
                w.writeVarint(UInt64(run.length))
                if !run.isDeleted {
                    Element.encode(Array(s.leaves[l].content[contentIndex..<(contentIndex + Int(run.length))]), into: &w)
                    contentIndex += Int(run.length)
                }
            }
            leaf = s.leaf(after: l)
        }
        if !waiting.isEmpty { w.write(contentsOf: ReplicatingArrayCoding.encode(waiting)) }
        return w.bytes
    }

    /// Decodes a format-2 or format-3 state: the array its runs make, and (format 3) the waiting
    /// operations, decoded but not yet applied (the caller checks and applies them). The waiting
    /// batch is bounded like any batch (`ReplicatingArrayCoding.maxOperations`, and by its bytes).
    static func decode<Element: ReplicatingElementCodable>(_ bytes: [UInt8], replica: ReplicaID, paragraphBreak: ((Element) -> Bool)?,
                                                          maximumElements: Int, maximumReplicas: Int) throws(BinaryDecodingError)
        -> (array: ReplicatingArray<Element>, waiting: [ReplicatingArrayOperation<Element>]) {
        typealias Storage = ReplicatingArrayStorage<Element>
        var r = BinaryReader(bytes)
        let v = try r.readByte()
        guard v == version || v == versionWithWaiting else { throw .unsupportedVersion(v) }
        var array = ReplicatingArray<Element>(replica: replica, paragraphBreak: paragraphBreak)
        let s = array.storage
        // Each table entry takes at least two bytes (ID and count).
        let replicaCount = try r.readCount(limit: Swift.min(ReplicatingArrayCoding.maxReplicas - 1, maximumReplicas, r.remaining / 2))
        // The table is read and its counts checked before any index is made for them: a count
        // is not backed by bytes (compacted elements are not sent), so the limit is the caller's.
        var table: [(id: ReplicaID, known: Int)] = []
        table.reserveCapacity(replicaCount)
        var totalKnown = 0
        var listed: Set<ReplicaID> = []
        for _ in 0..<replicaCount {
            let id = ReplicaID(try r.readVarint())
            guard listed.insert(id).inserted else { throw .invalid("replica \(id) listed twice") }
            let known = try r.readCount(limit: Swift.max(0, maximumElements - totalKnown))
            totalKnown += known
            table.append((id, known))
        }
        for (id, known) in table {
            let index = s.intern(id)
            s.idIndex[Int(index)].append(Storage.pendingLeaf, count: known)
        }
        let runCount = try r.readCount(limit: r.remaining)
        var runs = ContiguousArray<Storage.Run>()
        var content: [Element] = []
        var anchoredAhead: [(replica: UInt16, counter: UInt64)] = []
        var stored = 0
        func flush() {
            guard !runs.isEmpty else { return }
            s.appendBuilt(runs: runs, content: content)
            runs.removeAll(keepingCapacity: true)
            content.removeAll(keepingCapacity: true)
        }
        for _ in 0..<runCount {
            guard replicaCount > 0 else { throw .invalid("runs without replicas") }
            let tag = try r.readByte()
            guard tag >> 3 == 0, let form = AnchorForm(rawValue: tag >> 1) else { throw .invalid("unknown flags in run tag \(tag)") }
            let replicaIndex = UInt16(try r.readCount(limit: replicaCount - 1))
            let counter = try r.readVarint()
            let lamport = try r.readVarint()
            var anchorReplica = Storage.noReplica
            var anchorCounter: UInt64 = 0
            switch form {
            case .start: break
            case .previousOfSameReplica:
                guard counter > 0 else { throw .invalid("run at counter 0 cannot follow an earlier element of its replica") }
                anchorReplica = replicaIndex
                anchorCounter = counter - 1
            case .other:
                anchorReplica = UInt16(try r.readCount(limit: replicaCount - 1))
                anchorCounter = try r.readVarint()
            }
            let length = try r.readCount(limit: ReplicatingArrayCoding.maxRunLength)
            guard length > 0 else { throw .invalid("empty run") }
            let known = UInt64(s.idIndex[Int(replicaIndex)].count)
            guard counter < known, UInt64(length) <= known - counter, lamport <= UInt64.max - UInt64(length) else {
                throw .invalid("run \(counter)+\(length) of replica \(s.replicas[Int(replicaIndex)]) is beyond its known count")
            }
            guard s.idIndex[Int(replicaIndex)].allEqual(Storage.pendingLeaf, in: Int(counter)..<(Int(counter) + length)) else {
                throw .invalid("a counter of \(counter)+\(length) of replica \(s.replicas[Int(replicaIndex)]) stored twice")
            }
            if anchorReplica != Storage.noReplica {
                guard anchorCounter < UInt64(s.idIndex[Int(anchorReplica)].count) else { throw .invalid("run anchored to an unknown element") }
                let entry = s.idIndex[Int(anchorReplica)][Int(anchorCounter)]
                if entry == Storage.claimedLeaf { flush() }
                if entry != Storage.pendingLeaf, let (al, ar, ao) = s.locate(replica: anchorReplica, counter: anchorCounter) {
                    guard s.leaves[al].runs[ar].lamport + UInt64(ao) < lamport else { throw .invalid("run's Lamport counter is not after its anchor's") }
                } else {
                    // Not stored yet: it must turn out to be compacted, not stored later.
                    anchoredAhead.append((anchorReplica, anchorCounter))
                }
            }
            let isDeleted = tag & 1 != 0
            if !isDeleted { content.append(contentsOf: try Element.decode(count: length, from: &r)) }
            // Claim the counters now, so later runs see them stored (or see a duplicate).
            s.idIndex[Int(replicaIndex)].assign(Storage.claimedLeaf, to: Int(counter)..<(Int(counter) + length))
            runs.append(Storage.Run(counter: counter, lamport: lamport, anchorCounter: anchorCounter, replica: replicaIndex,
                                    anchorReplica: anchorReplica, length: UInt32(length), isDeleted: isDeleted))
            s.maxLamport = Swift.max(s.maxLamport, lamport + UInt64(length) - 1)
            stored += length
            if runs.count >= Storage.maxRunsPerLeaf / 2 { flush() }
        }
        flush()
        var waiting: [ReplicatingArrayOperation<Element>] = []
        if v == versionWithWaiting {
            let batch = Array(try r.readBytes(r.remaining))
            do {
                waiting = try ReplicatingArrayCoding.decode(batch, as: Element.self)
            } catch {
                throw .invalid("waiting operations: \(error.description)")
            }
        }
        guard r.isAtEnd else { throw .invalid("\(r.remaining) unexpected bytes after the last run") }
        for (anchorReplica, anchorCounter) in anchoredAhead where s.idIndex[Int(anchorReplica)][Int(anchorCounter)] != Storage.pendingLeaf {
            throw .invalid("a run is anchored to an element stored after it")
        }
        // What no run claimed was compacted away.
        for i in 0..<s.idIndex.count { s.idIndex[i].replace(Storage.pendingLeaf, with: Storage.compactedLeaf) }
        s.compactedCount = totalKnown - stored
        if s.compactedCount > 0 { s.fitAfterCompaction() }
        array.replica = replica
        return (array, waiting)
    }
}
