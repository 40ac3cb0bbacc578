import Foundation
import Testing
import ReplicatingTypes

/// Decoders and counters against input that lies: every claimed count is checked against the
/// bytes that follow (or the caller's limit) before anything is reserved for it, and counters
/// from elsewhere near `UInt64.max` never make a local edit trap.
@Suite struct LyingCountTests {
    typealias Op = ReplicatingArrayOperation<Unicode.Scalar>

    static func insertion(replica: UInt64, counter: UInt64 = 0, lamport: UInt64, removed: Int? = nil) -> Op {
        .insert(ReplicatingArrayInsertion(id: ElementID(replica: ReplicaID(replica), counter: counter), lamport: lamport, anchor: nil,
                                          content: removed.map { .removed(count: $0) } ?? .elements(InsertedElements(["x"]))))
    }

    static func refusal(_ body: () throws(BinaryDecodingError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aRunClaimingMoreScalarsThanItsBytesIsRefused() {
        var writer = BinaryWriter()
        writer.writeVarint(1)        // one byte of UTF-8
        writer.write(0x41)
        var reader = BinaryReader(writer.bytes)
        let why = Self.refusal { () throws(BinaryDecodingError) in _ = try Unicode.Scalar.decode(count: 1 << 26, from: &reader) }
        #expect(why == "run claims 67108864 scalars in 1 bytes")
    }

    @Test func aBatchClaimingMoreOperationsThanItsBytesIsRefused() {
        var writer = BinaryWriter()
        writer.write(1)
        writer.writeVarint(0)          // no replicas
        writer.writeVarint(1 << 23)    // operations claimed, two bytes at least each
        writer.write(contentsOf: [2, 0, 2, 0])
        let why = Self.refusal { () throws(BinaryDecodingError) in _ = try ReplicatingArrayCoding.decode(writer.bytes, as: Unicode.Scalar.self) }
        #expect(why?.contains("a count of 8388608 exceeds the limit of 4") == true, "\(String(describing: why))")
        let batch = ReplicatingArrayCoding.encode([Self.insertion(replica: 1, lamport: 1), Self.insertion(replica: 1, counter: 1, lamport: 2)])
        let capped = Self.refusal { () throws(BinaryDecodingError) in _ = try ReplicatingArrayCoding.decode(batch, as: Unicode.Scalar.self, maximumOperations: 1) }
        #expect(capped?.contains("exceeds the limit of 1") == true, "the caller's bound holds before any operation is built")
    }

    @Test func aRemovalClaimingMoreRangesThanItsBytesIsRefused() {
        var writer = BinaryWriter()
        writer.write(1)
        writer.writeVarint(1)
        writer.writeVarint(7)          // replica 7
        writer.writeVarint(1)          // one operation
        writer.write(2)                // a removal
        writer.writeVarint(1 << 30)    // ranges claimed
        writer.write(contentsOf: [0, 0, 1])
        let why = Self.refusal { () throws(BinaryDecodingError) in _ = try ReplicatingArrayCoding.decode(writer.bytes, as: Unicode.Scalar.self) }
        #expect(why?.contains("a count of 1073741824 exceeds the limit of 2") == true, "\(String(describing: why))")
    }

    @Test func aStateClaimingHugeKnownCountsIsRefusedBeforeItsIndexIsMade() {
        var writer = BinaryWriter()
        writer.write(2)
        writer.writeVarint(1)
        writer.writeVarint(999)
        writer.writeVarint(1 << 40)
        writer.writeVarint(0)
        let why = Self.refusal { () throws(BinaryDecodingError) in _ = try ReplicatingText(decodingState: writer.bytes, replica: ReplicaID(1)) }
        #expect(why?.contains("a count of 1099511627776 exceeds the limit of \(ReplicatingArrayCoding.defaultMaximumElements)") == true,
                "\(String(describing: why))")
        let small = Self.refusal { () throws(BinaryDecodingError) in
            _ = try ReplicatingText(decodingState: writer.bytes, replica: ReplicaID(1), maximumElements: 1_000)
        }
        #expect(small?.contains("exceeds the limit of 1000") == true)
    }

    @Test func aStateOfRemovedRunsIsRefusedBeforeItIsApplied() {
        let bytes = ReplicatingArrayCoding.encode([Self.insertion(replica: 5, lamport: 1, removed: 1 << 26)])
        #expect(bytes.count < 20, "a few bytes claim 2^26 elements")
        let why = Self.refusal { () throws(BinaryDecodingError) in
            _ = try ReplicatingText(decodingState: bytes, replica: ReplicaID(1), maximumElements: 1 << 20)
        }
        #expect(why == "state claims 67108864 elements, more than the limit of 1048576")
        let replicas = ReplicatingArrayCoding.encode((0..<10).map { Self.insertion(replica: 100 + UInt64($0), lamport: 1) })
        let many = Self.refusal { () throws(BinaryDecodingError) in
            _ = try ReplicatingText(decodingState: replicas, replica: ReplicaID(1), maximumReplicas: 4)
        }
        #expect(many == "state names 10 replicas, more than the limit of 4")
    }

    @Test func growthCountsWhatCountersClaim() {
        var text = ReplicatingText("abc", replica: ReplicaID(1))
        let growth = text.scalars.growth(from: [
            Self.insertion(replica: 2, counter: 1 << 40, lamport: 9),   // skips 2^40 counters
            Self.insertion(replica: 3, lamport: 7, removed: 10),
            Self.insertion(replica: 1, lamport: 1),                      // already here
        ])
        #expect(growth.newElements == (1 << 40) + 1 + 10)
        #expect(growth.totalElements == 3 + (1 << 40) + 1 + 10)
        #expect(growth.newReplicas == 2 && growth.totalReplicas == 3)
        #expect(growth.lamportEnd == 16)
        let lying = text.scalars.growth(from: [Self.insertion(replica: 4, counter: UInt64.max, lamport: UInt64.max)])
        #expect(lying.newElements == UInt64.max - 3 && lying.lamportEnd == UInt64.max, "saturates, never traps")
        // Waiting insertions count as claimed.
        text.apply(Self.insertion(replica: 2, counter: 5, lamport: 9))
        #expect(text.scalars.growth(from: []).totalElements == 3 + 6)
    }

    /// What local edits are checked against: the elements `growth(from: [])` counts, removed and
    /// waiting ones included, and each local insertion adds exactly its elements to it.
    @Test func claimedElementsAreWhatGrowthCounts() {
        var text = ReplicatingText("abc", replica: ReplicaID(1))
        #expect(text.scalars.claimedElementCount == 3)
        _ = text.replace(1..<3, with: [])
        #expect(text.scalars.claimedElementCount == 3, "removed elements still count")
        text.apply(Self.insertion(replica: 2, lamport: 7, removed: 10))
        #expect(text.scalars.claimedElementCount == 13)
        text.apply(Self.insertion(replica: 3, counter: 5, lamport: 9))   // waits for counters 0..<5
        #expect(text.scalars.claimedElementCount == 13 + 6)
        #expect(text.scalars.claimedElementCount == text.scalars.growth(from: []).totalElements)
        let before = text.scalars.claimedElementCount
        let operations = text.replace(0..<0, with: Array("hello".unicodeScalars))
        #expect(text.scalars.claimedElementCount == before + 5)
        var peer = ReplicatingText("", replica: ReplicaID(9))
        for op in ReplicatingText("abc", replica: ReplicaID(1)).operations() { peer.apply(op) }
        #expect(peer.scalars.growth(from: operations).newElements == 5, "a peer counts the same new elements")
    }

    @Test func aRemoteCounterAtTheEndLeavesLocalEditsRefusedNotTrapping() {
        var text = ReplicatingText("abc", replica: ReplicaID(1))
        text.apply(Self.insertion(replica: 2, lamport: UInt64.max - 1))
        #expect(text.scalars.lamportClock == UInt64.max - 1)
        #expect(!text.scalars.canInsertLocally(count: 1))
        let operations = text.replace(0..<0, with: Array("z".unicodeScalars))
        #expect(operations.isEmpty, "refused: nothing changed, no trap")
        #expect(text.string == "xabc" || text.string == "abcx")
        var register = ReplicatingRegister(0, replica: ReplicaID(1))
        var other = ReplicatingRegister(0, replica: ReplicaID(2))
        while other.timestamp.counter < 3 { other.set(1) }
        register = register.merged(with: other)
        let written = register.set(5)
        #expect(written)
        #expect(LamportTimestamp(counter: .max, replica: ReplicaID(1)).successor(by: ReplicaID(1)) == nil)
    }

    @Test func aDictionaryMergedWithAClockAtTheEndRefusesLocalWritesNotTrapping() throws {
        let lying = #"{"replica":2,"clock":18446744073709551615,"entries":[]}"#
        let theirs = try JSONDecoder().decode(ReplicatingDictionary<String, Int>.self, from: Data(lying.utf8))
        var mine = ReplicatingDictionary<String, Int>(replica: ReplicaID(1))
        mine["kept"] = 1
        mine = mine.merged(with: theirs)
        let written = mine.set(2, forKey: "kept")
        #expect(!written, "no timestamp left: refused")
        mine["other"] = 3
        #expect(mine.dictionary == ["kept": 1], "nothing changed, no trap")
    }
}
