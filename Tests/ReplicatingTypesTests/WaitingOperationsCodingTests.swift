import Foundation
import Testing
@testable import ReplicatingTypes

/// A compacted array's state keeps the operations waiting in it (state format 3), and format-2
/// states written before format 3 existed still decode.
@Suite struct WaitingOperationsCodingTests {
    /// A text with tombstones dropped, edited on, nothing waiting. Deterministic, public API only,
    /// so that the code before format 3 ran it too.
    static func compactedScenario() -> ReplicatingText {
        var a = ReplicatingText("first line\nsecond line é中😀\nthird", replica: ReplicaID(1))
        var b = ReplicatingText(replica: ReplicaID(2))
        for op in a.operations() { b.integrate(op) }
        for op in b.replace(6..<6, with: Array("new ".unicodeScalars)) { a.integrate(op) }
        _ = a.replace(0..<6, with: [])
        _ = a.replace(10..<14, with: [])
        a.dropTombstones()
        _ = a.replace(3..<3, with: Array("x\ny".unicodeScalars))
        _ = a.replace(0..<1, with: [])
        return a
    }

    /// `compactedScenario().encodedState()` as the code before format 3 wrote it (commit a1d519a,
    /// state format 2).
    static let oldFormat2State = "AgIBIwIEBgUBACEABQECAQEiAgJldwQAICUBAgMDeAp5AgEDJAEBIAIABgcGBmxpbmUKcwIAEBEQFmQgbGluZSDDqeS4rfCfmIAKdGhpcmQ="

    /// A compacted copy (replica 1) holding an insertion waiting for its replica's earlier
    /// counter, one waiting for its anchor and a removal of elements it does not know yet; and
    /// `first`, the insertion they all wait for.
    static func compactedWithWaiting() -> (local: ReplicatingText, first: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        var local = ReplicatingText("hello world", replica: ReplicaID(1))
        var two = ReplicatingText(replica: ReplicaID(2))
        var three = ReplicatingText(replica: ReplicaID(3))
        for op in local.operations() { two.integrate(op); three.integrate(op) }
        local.replace(0..<6, with: [])
        #expect(local.dropTombstones() == 6)
        let first = two.replace(11..<11, with: Array("!".unicodeScalars))
        let second = two.replace(12..<12, with: Array("?".unicodeScalars))
        for op in first + second { three.integrate(op) }
        let removal = three.replace(11..<12, with: [])
        let anchored = three.replace(12..<12, with: Array("#".unicodeScalars))
        for op in second + removal + anchored { local.integrate(op) }
        return (local, first)
    }

    @Test func aFormat2StateWrittenBeforeFormat3StillDecodes() throws {
        let old = try #require(Data(base64Encoded: Self.oldFormat2State)).map { $0 }
        #expect(old.first == 2)
        let expected = Self.compactedScenario()
        let decoded = try ReplicatingText(decodingState: old, replica: ReplicaID(1))
        #expect(decoded.string == expected.string)
        #expect(decoded.versionVector == expected.versionVector)
        #expect(decoded.scalars.compactedCount == expected.scalars.compactedCount)
        #expect(decoded.scalars.tombstoneCount == expected.scalars.tombstoneCount)
        // Nothing waits, so this code still writes format 2, byte for byte as before.
        #expect(expected.encodedState() == old)
        #expect(decoded.encodedState() == old)
    }

    @Test func aCompactedStateKeepsWaitingInsertionsAndRemovalsAndConverges() throws {
        let (local, first) = Self.compactedWithWaiting()
        #expect(local.scalars.pendingOperationCount == 3)
        let bytes = local.encodedState()
        #expect(bytes.first == 3)
        var decoded = try ReplicatingText(decodingState: bytes, replica: ReplicaID(1), keepingWaitingOperations: true)
        #expect(decoded.scalars.pendingOperationCount == 3)
        #expect(decoded.string == local.string)
        #expect(decoded.versionVector == local.versionVector)
        #expect(decoded.scalars.compactedCount == local.scalars.compactedCount)
        #expect(decoded.encodedState() == bytes)
        // Both receive what the waiting operations wait for and converge.
        var copy = local
        for op in first { decoded.integrate(op); copy.integrate(op) }
        #expect(copy.string == "world?#")
        #expect(decoded.string == copy.string)
        #expect(decoded.scalars.pendingOperationCount == 0)
        #expect(decoded.versionVector == copy.versionVector)
        #expect(decoded.encodedState() == copy.encodedState())
        #expect(decoded.encodedState().first == 2)
    }

    @Test func aStateFromElsewhereWithWaitingOperationsIsRefused() throws {
        let bytes = Self.compactedWithWaiting().local.encodedState()
        #expect(throws: BinaryDecodingError.invalid("state refers to 3 elements it does not contain")) {
            try ReplicatingText(decodingState: bytes, replica: ReplicaID(4))
        }
    }

    @Test func aStateClaimingHugeNumbersOfWaitingOperationsIsRefused() throws {
        var bytes = try #require(Data(base64Encoded: Self.oldFormat2State)).map { $0 }
        bytes[0] = 3
        // A batch header (format 1, no replicas) claiming more operations than allowed or backed.
        for count in [UInt64(1) << 40, UInt64(ReplicatingArrayCoding.maxOperations) + 1] {
            var header = BinaryWriter()
            header.write(1)
            header.writeVarint(0)
            header.writeVarint(count)
            do {
                _ = try ReplicatingText(decodingState: bytes + header.bytes + [UInt8](repeating: 2, count: 64), replica: ReplicaID(1),
                                        keepingWaitingOperations: true)
                Issue.record("a state claiming \(count) waiting operations was accepted")
            } catch {
                #expect(error.description.hasPrefix("waiting operations: a count of \(count) exceeds the limit of"))
            }
        }
    }

    @Test func aDamagedWaitingSectionIsRefused() throws {
        let bytes = Self.compactedWithWaiting().local.encodedState()
        for cut in 1..<8 {
            #expect(throws: BinaryDecodingError.self) {
                try ReplicatingText(decodingState: Array(bytes.dropLast(cut)), replica: ReplicaID(1), keepingWaitingOperations: true)
            }
        }
        #expect(throws: BinaryDecodingError.self) {
            try ReplicatingText(decodingState: bytes + [0], replica: ReplicaID(1), keepingWaitingOperations: true)
        }
    }

    @Test func waitingOperationsCannotClaimMoreElementsThanTheLimit() throws {
        let (local, _) = Self.compactedWithWaiting()
        let bytes = local.encodedState()
        // The runs alone (11 elements) fit; with what the waiting insertions claim they do not.
        let claimed = Int(local.scalars.claimedElementCount)
        #expect(claimed == 14)
        #expect(throws: BinaryDecodingError.invalid("state claims 14 elements, more than the limit of 13")) {
            try ReplicatingText(decodingState: bytes, replica: ReplicaID(1), maximumElements: claimed - 1, keepingWaitingOperations: true)
        }
        #expect(throws: Never.self) {
            try ReplicatingText(decodingState: bytes, replica: ReplicaID(1), maximumElements: claimed, keepingWaitingOperations: true)
        }
    }
}
