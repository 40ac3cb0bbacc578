import EditingTraces
import Testing
import Foundation
import ReplicatingTypes

/// Merge laws over random histories, for every replicated type: commutative, associative,
/// idempotent, and an encode/decode round trip that preserves state.
@Suite struct MergeLawTests {
    /// Three replicas of a type, each edited at random, with some random partial merges between.
    static func histories<T: Replicable>(seed: UInt64, make: (ReplicaID) -> T, edit: (inout T, inout SeededRandom) -> Void) -> [T] {
        var random = SeededRandom(seed: seed)
        var replicas = (1...3).map { make(ReplicaID($0)) }
        for _ in 0..<60 {
            let r = Int.random(in: 0..<3, using: &random)
            if random.chance(0.2) {
                let other = Int.random(in: 0..<3, using: &random)
                replicas[r].merge(with: replicas[other])
            } else {
                edit(&replicas[r], &random)
            }
        }
        return replicas
    }

    static func checkLaws<T: Replicable & Equatable>(_ replicas: [T], seed: UInt64) {
        let (a, b, c) = (replicas[0], replicas[1], replicas[2])
        #expect(a.merged(with: b) == b.merged(with: a), "commutative, seed \(seed)")
        #expect(a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)), "associative, seed \(seed)")
        #expect(a.merged(with: a) == a, "idempotent, seed \(seed)")
        #expect(a.merged(with: b).merged(with: b) == a.merged(with: b), "idempotent after merge, seed \(seed)")
    }

    static func checkCodable<T: Codable & Equatable>(_ value: T) throws {
        let decoded = try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
        #expect(decoded == value)
    }

    static let seeds: [UInt64] = [51, 52, 53, 54, 55]

    @Test(arguments: seeds) func register(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { ReplicatingRegister(0, replica: $0) }) { r, random in r.set(Int.random(in: 0..<100, using: &random)) }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[0])
        let all = replicas[0].merged(with: replicas[1]).merged(with: replicas[2])
        #expect(all.value == replicas.max { $0.timestamp < $1.timestamp }!.value, "the newest write wins")
    }

    @Test(arguments: seeds) func addOnlySet(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { _ in ReplicatingAddOnlySet<Int>() }) { s, random in s.insert(Int.random(in: 0..<50, using: &random)) }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[1])
        let all = replicas[0].merged(with: replicas[1]).merged(with: replicas[2])
        #expect(all.values == replicas[0].values.union(replicas[1].values).union(replicas[2].values))
    }

    @Test(arguments: seeds) func set(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { ReplicatingSet<Int>(replica: $0) }) { s, random in
            let x = Int.random(in: 0..<12, using: &random)
            if random.chance(0.4) { s.remove(x) } else { s.insert(x) }
        }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[2])
    }

    @Test func setRemoveThenConcurrentReAdd() {
        var a = ReplicatingSet<String>(["x"], replica: ReplicaID(1))
        var b = a
        b.replica = ReplicaID(2)
        a.remove("x")
        b.remove("x")
        b.insert("x")
        #expect(a.merged(with: b).contains("x"))
        #expect(!a.contains("x"))
    }

    @Test(arguments: seeds) func dictionaryWithNestedReplicableValues(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { ReplicatingDictionary<String, ReplicatingAddOnlySet<Int>>(replica: $0) }) { d, random in
            let key = ["a", "b", "c"].randomElement(using: &random)!
            if random.chance(0.15) {
                d[key] = nil
            } else {
                var value = d[key] ?? ReplicatingAddOnlySet<Int>()
                value.insert(Int.random(in: 0..<20, using: &random))
                d[key] = value
            }
        }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[0])
    }

    @Test func dictionaryMergesConcurrentNestedEditsRecursively() {
        var a = ReplicatingDictionary<String, ReplicatingAddOnlySet<Int>>(replica: ReplicaID(1))
        a["k"] = ReplicatingAddOnlySet([1])
        var b = a
        b.replica = ReplicaID(2)
        a["k"]?.insert(2)
        b["k"]?.insert(3)
        #expect(a.merged(with: b)["k"]?.values == [1, 2, 3])
    }

    @Test(arguments: seeds) func orderedSet(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { ReplicatingOrderedSet<Int>(replica: $0) }) { s, random in
            let x = Int.random(in: 0..<10, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: s.remove(x)
            case 1: s.move(x, to: Int.random(in: 0...s.count, using: &random))
            default: s.insert(x, at: Int.random(in: 0...s.count, using: &random))
            }
        }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[1])
        let all = replicas[0].merged(with: replicas[1]).merged(with: replicas[2])
        #expect(Swift.Set(all.values).count == all.values.count, "no element appears twice")
    }

    @Test func concurrentMovesNeverDuplicate() {
        var a = ReplicatingOrderedSet<String>(replica: ReplicaID(1))
        for x in ["a", "b", "c", "d"] { a.append(x) }
        var b = a
        b.replica = ReplicaID(2)
        a.move("b", to: 3)
        b.move("b", to: 0)
        let merged = a.merged(with: b)
        #expect(merged == b.merged(with: a))
        #expect(merged.values.filter { $0 == "b" }.count == 1)
        #expect(merged.values.count == 4)
        #expect(a.values == ["a", "c", "d", "b"])
    }

    @Test(arguments: seeds) func array(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { ReplicatingArray<Int>(replica: $0) }) { a, random in
            if a.isEmpty || random.chance(0.65) {
                a.insert(contentsOf: (0..<Int.random(in: 1...3, using: &random)).map { _ in Int.random(in: 0..<100, using: &random) },
                         at: Int.random(in: 0...a.count, using: &random))
            } else {
                let at = Int.random(in: 0..<a.count, using: &random)
                a.removeSubrange(at..<Swift.min(a.count, at + Int.random(in: 1...3, using: &random)))
            }
        }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[0])
        for r in replicas {
            let decoded = try ReplicatingArray<Int>(decodingState: r.encodedState(), replica: ReplicaID(9))
            #expect(decoded == r)
            decoded._checkInvariants()
        }
    }

    @Test(arguments: seeds) func text(seed: UInt64) throws {
        let replicas = Self.histories(seed: seed, make: { ReplicatingText(replica: $0) }) { t, random in
            let at = Int.random(in: 0...t.count, using: &random)
            let n = Int.random(in: 0...Swift.min(2, t.count - at), using: &random)
            t.replace(at..<(at + n), with: (0..<Int.random(in: 0...3, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! })
        }
        Self.checkLaws(replicas, seed: seed)
        try Self.checkCodable(replicas[2])
    }

    @Test func versionVector() {
        let a = VersionVector([ReplicaID(1): 3, ReplicaID(2): 1])
        let b = VersionVector([ReplicaID(2): 4])
        let c = VersionVector([ReplicaID(3): 2])
        #expect(a.merged(with: b) == b.merged(with: a))
        #expect(a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)))
        #expect(a.merged(with: a) == a)
        #expect(a.merged(with: b) == VersionVector([ReplicaID(1): 3, ReplicaID(2): 4]))
        #expect(a.merged(with: b).dominates(a) && !a.dominates(b))
    }
}
