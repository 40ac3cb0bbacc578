import EditingTraces
import Foundation
import QuireProject
import ReplicatingTypes
import Testing

/// Three replicas change one project tree at random (create, move, move onto a file, delete,
/// delete and move folders, bring deleted files back) over a network that reorders, delays and
/// duplicates operations; at the end all must hold the same state and show the same view, and
/// the view must keep its guarantees. Merging whole states must obey the merge laws.
@Suite struct ProjectTreeConvergenceTests {
    static let folders = ["", "a", "b", "a/b", "src", "src/lib"]
    static let names = ["x", "y", "z.txt", "a", "b", "lib", "main.swift"]

    static func randomPath(_ random: inout SeededRandom) -> ProjectPath? {
        let folder = folders[random.below(folders.count)]
        let name = names[random.below(names.count)]
        return try? ProjectPath(folder.isEmpty ? name : folder + "/" + name)
    }

    /// One random local change on `tree`: the operations it made (none when it was refused).
    static func change(_ tree: inout ProjectTree, _ random: inout SeededRandom) -> [ProjectTree.Operation] {
        let view = tree.view
        let live = view.paths.keys.sorted()
        let someFile = live.isEmpty ? nil : live[random.below(live.count)]
        do {
            switch random.below(10) {
            case 0, 1, 2:
                guard let path = randomPath(&random) else { return [] }
                return [try tree.create(at: path)]
            case 3, 4:
                guard let file = someFile, let path = randomPath(&random) else { return [] }
                return [try tree.move(file, to: path)]
            case 5:
                guard let file = someFile, let path = randomPath(&random) else { return [] }
                return try tree.move(file, replacing: path)
            case 6:
                guard let file = someFile else { return [] }
                return [try tree.delete(file)]
            case 7:
                let folder = folders[1 + random.below(folders.count - 1)]
                return try tree.deleteFolder(folder)
            case 8:
                let folder = folders[1 + random.below(folders.count - 1)]
                guard let target = try? ProjectPath(["c", "d", "a/c", "src/old"][random.below(4)]) else { return [] }
                return try tree.moveFolder(folder, to: target)
            default:
                let deleted = tree.operations.filter { $0.path == nil }
                guard !deleted.isEmpty, let path = randomPath(&random) else { return [] }
                return [try tree.move(deleted[random.below(deleted.count)].file, to: path)]
            }
        } catch {
            return []
        }
    }

    static func checkView(_ tree: ProjectTree, seed: UInt64) {
        let view = tree.view
        #expect(view.paths.count == tree.operations.filter { $0.path != nil }.count, "every live file shows, seed \(seed)")
        #expect(view.files.count == view.paths.count, "no two files share a path, seed \(seed)")
        let paths = Set(view.files.keys.map(\.string))
        for path in view.files.keys {
            #expect(!path.ancestors.contains { paths.contains($0) }, "\(path) is under a file, seed \(seed)")
        }
        for (file, path) in view.paths where !view.conflicted.contains(file) {
            #expect(tree.claimedPath(of: file) == path, "a file not in conflict shows at its claim, seed \(seed)")
        }
    }

    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds) func replicasConvergeWhateverTheDeliveryOrder(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var replicas = (1...3).map { ProjectTree(replica: ReplicaID(UInt64($0))) }
        var log: [(origin: Int, operation: ProjectTree.Operation)] = []
        for _ in 0..<200 {
            let r = random.below(3)
            if random.chance(0.5) || log.isEmpty {
                for operation in Self.change(&replicas[r], &random) { log.append((r, operation)) }
            } else {
                // Deliver a few operations from the log, any of them, possibly again.
                for _ in 0..<(1 + random.below(4)) {
                    let entry = log[random.below(log.count)]
                    if entry.origin != r { try replicas[r].apply(entry.operation) }
                }
            }
        }
        for r in 0..<3 {
            var shuffled = log.map(\.operation)
            shuffled.shuffle(using: &random)
            for operation in shuffled { try replicas[r].apply(operation) }
        }
        #expect(replicas[0] == replicas[1] && replicas[1] == replicas[2], "states converge, seed \(seed)")
        #expect(replicas[0].view == replicas[1].view && replicas[1].view == replicas[2].view, "views converge, seed \(seed)")
        for replica in replicas { Self.checkView(replica, seed: seed) }

        // The operations alone, in log order and reversed, make the same tree.
        var forward = ProjectTree(replica: ReplicaID(9)), backward = ProjectTree(replica: ReplicaID(9))
        for entry in log { try forward.apply(entry.operation) }
        for entry in log.reversed() { try backward.apply(entry.operation) }
        #expect(forward == replicas[0] && backward == replicas[0], "seed \(seed)")
        #expect(log.count > 40, "the run made changes, seed \(seed)")
    }

    @Test(arguments: seeds.prefix(15)) func mergeLaws(seed: UInt64) throws {
        var random = SeededRandom(seed: seed &+ 1000)
        var replicas = (1...3).map { ProjectTree(replica: ReplicaID(UInt64($0))) }
        for _ in 0..<120 {
            let r = random.below(3)
            if random.chance(0.2) {
                replicas[r].merge(with: replicas[random.below(3)])
            } else {
                _ = Self.change(&replicas[r], &random)
            }
        }
        let (a, b, c) = (replicas[0], replicas[1], replicas[2])
        #expect(a.merged(with: b) == b.merged(with: a), "commutative, seed \(seed)")
        #expect(a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)), "associative, seed \(seed)")
        #expect(a.merged(with: a) == a, "idempotent, seed \(seed)")
        let all = a.merged(with: b).merged(with: c)
        #expect(all.view == c.merged(with: a).merged(with: b).view, "seed \(seed)")
        Self.checkView(all, seed: seed)
        // A state sent as operations and applied is the same as the state merged.
        var rebuilt = a
        for operation in b.operations + c.operations { try rebuilt.apply(operation) }
        #expect(rebuilt == all, "seed \(seed)")
        // Operations survive encoding, and a decoded one is checked like any path.
        let data = try JSONEncoder().encode(all.operations)
        #expect(try JSONDecoder().decode([ProjectTree.Operation].self, from: data) == all.operations)
    }
}
