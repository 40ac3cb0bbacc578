import ReplicatingTypes

/// Checks the insertions of one batch of peer operations against each other, as they stand once
/// the whole batch is applied, without applying anything and without looking at the document.
///
/// Why it is enough: a peer's batch is judged operation by operation against the state the
/// earlier operations of the same batch leave (protocol/decisions/peer-batches.md). What an earlier
/// operation can change about a later one's validity is only what it adds: elements the later one
/// may reuse the IDs of, or be anchored to. Each operation is still checked against the document
/// as it is (`validationError`, `SharedDocument.contentConflict`), which earlier operations cannot
/// make pass or fail wrongly; this type adds the checks against what the batch itself adds. So a
/// frame is refused whole, before any of it is applied, exactly when one of its operations would be
/// invalid where it stands, and the cost depends on the batch, not on the document (no scratch copy
/// of the document, which would be O(n) per keystroke).
///
/// Guarantees: `problem(in:)` is nil exactly when (1) no two insertions of the batch give one
/// element ID different Lamport counters, anchors or characters, and (2) every insertion anchored
/// to an element another insertion of the batch makes has a Lamport counter after that element's.
/// No arithmetic on the peer's counters can trap: an overflow is a problem like any other.
/// - Complexity: O(k log k + e) for k insertions carrying e elements.
enum BatchConsistency {
    typealias Insertion = ReplicatingArrayInsertion<Unicode.Scalar>

    /// Counters `start..<end` of one replica first made by insertion `index` of the batch.
    private struct Segment {
        var start: UInt64
        var end: UInt64
        var index: Int
    }

    /// Why the insertions of `operations` contradict each other, or nil when they agree.
    static func problem(in operations: [ReplicatingArrayOperation<Unicode.Scalar>]) -> String? {
        var insertions: [Insertion] = []
        for case .insert(let insertion) in operations where insertion.count > 0 { insertions.append(insertion) }
        // One insertion (a keystroke) has nothing in the batch to disagree with.
        guard insertions.count > 1 else { return nil }
        for insertion in insertions where end(of: insertion) == nil || lamport(of: insertion, at: insertion.id.counter) == nil {
            return "insertion \(insertion.id) overflows its counters"
        }
        var byReplica: [ReplicaID: [Int]] = [:]
        for (index, insertion) in insertions.enumerated() { byReplica[insertion.id.replica, default: []].append(index) }
        var segments: [ReplicaID: [Segment]] = [:]
        for (replica, indices) in byReplica {
            let sorted = indices.sorted { insertions[$0].id.counter < insertions[$1].id.counter }
            var made: [Segment] = []
            // The insertion reaching furthest so far: every later one that overlaps it must agree with it.
            var reference: Int?
            var reach: UInt64 = 0
            for index in sorted {
                let insertion = insertions[index]
                let start = insertion.id.counter
                let stop = end(of: insertion) ?? start
                if let reference, start < reach, let problem = disagreement(insertions[reference], insertion, from: start, to: min(stop, reach)) {
                    return problem
                }
                if reference == nil || stop > reach {
                    made.append(Segment(start: reference == nil ? start : max(start, reach), end: stop, index: index))
                    reference = index
                    reach = stop
                }
            }
            segments[replica] = made
        }
        // An anchor the batch itself makes must be older than what is anchored to it.
        for insertion in insertions {
            guard let anchor = insertion.anchor, let segment = segment(holding: anchor.counter, in: segments[anchor.replica] ?? []) else { continue }
            let maker = insertions[segment.index]
            guard let anchorLamport = lamport(of: maker, at: anchor.counter), anchorLamport < insertion.lamport else {
                return "insertion \(insertion.id) has Lamport counter \(insertion.lamport), not after its anchor \(anchor) made in the same batch"
            }
        }
        return nil
    }

    /// Why `later` disagrees with `earlier` on the counters `from..<to` both make, or nil.
    private static func disagreement(_ earlier: Insertion, _ later: Insertion, from: UInt64, to: UInt64) -> String? {
        guard lamport(of: earlier, at: from) == lamport(of: later, at: from), anchor(of: earlier, at: from) == anchor(of: later, at: from) else {
            return "insertion \(later.id) conflicts with another insertion of the same batch under that ID"
        }
        guard case .elements(let first) = earlier.content, case .elements(let second) = later.content else { return nil }
        var counter = from
        while counter < to {
            let i = Int(counter - earlier.id.counter), j = Int(counter - later.id.counter)
            if first[i] != second[j] {
                return "insertion \(later.id) gives element \(ElementID(replica: later.id.replica, counter: counter)) another character than an insertion of the same batch"
            }
            counter += 1
        }
        return nil
    }

    /// The counter after the insertion's last element; nil when it overflows.
    private static func end(of insertion: Insertion) -> UInt64? {
        let (end, overflow) = insertion.id.counter.addingReportingOverflow(UInt64(insertion.count))
        return overflow ? nil : end
    }

    /// The Lamport counter of the insertion's element `counter` (within it); nil on overflow.
    private static func lamport(of insertion: Insertion, at counter: UInt64) -> UInt64? {
        guard counter >= insertion.id.counter else { return nil }
        let (value, overflow) = insertion.lamport.addingReportingOverflow(counter - insertion.id.counter)
        guard !overflow, insertion.lamport.addingReportingOverflow(UInt64(insertion.count)).overflow == false else { return nil }
        return value
    }

    /// The element the insertion's element `counter` follows.
    private static func anchor(of insertion: Insertion, at counter: UInt64) -> ElementID? {
        counter == insertion.id.counter ? insertion.anchor : ElementID(replica: insertion.id.replica, counter: counter - 1)
    }

    /// The segment holding `counter`, by binary search over sorted, disjoint segments.
    private static func segment(holding counter: UInt64, in segments: [Segment]) -> Segment? {
        var low = 0, high = segments.count
        while low < high {
            let middle = low + (high - low) / 2
            if segments[middle].end <= counter { low = middle + 1 } else { high = middle }
        }
        guard low < segments.count, segments[low].start <= counter else { return nil }
        return segments[low]
    }
}
