import EditingTraces
import Testing
@testable import ReplicatingTypes

/// `operations(since:)` copies content only for the runs it sends and sorts keys instead of
/// insertions; it must give exactly the operations, in the order, of the plain walk it replaced
/// (every maximal run with its content, the runs the other copy lacks cut to what it lacks,
/// sorted by first timestamp), for any version vector, and encode to the same bytes.
@Suite struct OperationsSinceTests {
    /// The walk `operations(since:)` made before, kept as the reference.
    static func reference<Element>(_ array: ReplicatingArray<Element>, since version: VersionVector) -> [ReplicatingArrayOperation<Element>] {
        let s = array.storage
        var insertions: [ReplicatingArrayInsertion<Element>] = []
        var removed: [ElementIDRange] = []
        s.forEachCanonicalRun { run, content in
            let replica = s.replicas[Int(run.replica)]
            if run.isDeleted { removed.append(ElementIDRange(start: ElementID(replica: replica, counter: run.counter), count: UInt64(run.length))) }
            let have = version[replica]
            guard run.end > have else { return }
            let skip = Int(have > run.counter ? have - run.counter : 0)
            let insertion = ReplicatingArrayInsertion(
                id: ElementID(replica: replica, counter: run.counter), lamport: run.lamport, anchor: s.anchor(of: run),
                content: run.isDeleted ? .removed(count: Int(run.length)) : .elements(InsertedElements(content)))
            insertions.append(skip > 0 ? insertion.droppingFirst(skip) : insertion)
        }
        insertions.sort { $0.timestamp < $1.timestamp }
        var operations = insertions.map { ReplicatingArrayOperation.insert($0) }
        operations.append(contentsOf: s.pendingInsertions.map { .insert($0) })
        for (replica, ranges) in s.pendingRemovals {
            removed.append(contentsOf: ranges.map { ElementIDRange(start: ElementID(replica: replica, counter: $0.lowerBound), count: UInt64($0.count)) })
        }
        if !removed.isEmpty { operations.append(.remove(ElementIDRanges(ReplicatingArray<Element>.coalesced(removed)))) }
        return operations
    }

    /// Three replicas edit one text (typing, pastes spanning leaves, cuts, their edits crossing);
    /// at checkpoints every copy's operations since each earlier version, and since versions cut
    /// in the middle of runs, match the reference and its encoding.
    @Test(arguments: testSeeds([11, 12, 13]))
    func operationsSinceAnyVersionMatchTheReference(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var copies = (1...3).map { ReplicatingText(replica: ReplicaID(UInt64($0))) }
        var versions: [VersionVector] = [VersionVector()]
        var compared = 0
        for step in 0..<600 {
            let who = random.below(3)
            let count = copies[who].count
            let at = random.below(count + 1)
            var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            switch random.below(10) {
            case 0..<6:
                let typed = (0..<(1 + random.below(random.chance(0.1) ? 1_500 : 6))).map { _ in testAlphabet[random.below(testAlphabet.count)] }
                operations = copies[who].replace(at..<at, with: typed)
            default:
                guard count > 0 else { continue }
                operations = copies[who].replace(at..<Swift.min(count, at + 1 + random.below(random.chance(0.2) ? 900 : 4)), with: [])
            }
            // The others receive it now or later (a copy lagging behind has a version to catch up from).
            for other in 0..<3 where other != who && random.chance(0.7) {
                for operation in operations { copies[other].integrate(operation) }
            }
            if step % 50 == 49 {
                for i in 0..<3 { for j in 0..<3 where i != j { copies[i] = copies[i].merged(with: copies[j]) } }
                versions.append(copies[0].versionVector)
                // Versions that end inside runs.
                var cut = VersionVector()
                for (replica, known) in copies[0].versionVector.counts { cut[replica] = UInt64(random.below(Int(known) + 1)) }
                versions.append(cut)
                for copy in copies {
                    for version in versions {
                        let operations = copy.scalars.operations(since: version)
                        #expect(operations == Self.reference(copy.scalars, since: version), "seed \(seed) step \(step) since \(version)")
                        #expect(ReplicatingArrayCoding.encode(operations) == ReplicatingArrayCoding.encode(Self.reference(copy.scalars, since: version)))
                        compared += 1
                    }
                }
            }
        }
        #expect(compared > 100)
    }
}
