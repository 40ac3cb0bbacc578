/// The runs of one leaf kept cold: after a compaction, a leaf's 32-byte `Run` records are stored
/// as a few bytes each (deltas from the run before, as variable-length integers), and decoded
/// back ("thawed") into the leaf's run array when an edit or a remote operation changes that
/// leaf. A document's memory thus only grows back in the leaves people edit.
///
/// Guarantees: `thawed()` gives back exactly the runs `init(_:)` was given, in order; reading a
/// frozen leaf (`find`, `runHolding`, `thawed()`, through the storage's readers) decodes it without changing it,
/// so copies that share a storage can still be read on several threads at once.
///
/// Encoding of each run, after the one before it in the leaf (`previous`; none for the first,
/// read as a run of replica 0 ending at counter 0 and Lamport 0):
/// - a tag byte: bit 0 tombstone; bits 1-2 the anchor (0: no anchor, counter 0; 1: the element
///   before it of its own replica; 2: the last element of `previous`; 3: written out); bit 3 the
///   replica written out (else `previous`'s);
/// - the replica (varint), when bit 3 is set;
/// - the counter minus `previous.end`, zigzag varint;
/// - the Lamport counter's distance from the counter minus `previous`'s, zigzag varint (0 when
///   both were typed by one replica with nothing from another between);
/// - the anchor's replica and counter (varints), for anchor kind 3;
/// - the length (varint).
struct FrozenRuns<Element> {
    typealias Run = ReplicatingArrayStorage<Element>.Run

    private(set) var bytes: ContiguousArray<UInt8> = []

    init() {}

    /// `runs` encoded; not empty when `runs` is not.
    init(_ runs: ContiguousArray<Run>) {
        var out = ContiguousArray<UInt8>()
        out.reserveCapacity(runs.count * 5)
        var previous = Self.start
        for run in runs {
            var tag: UInt8 = run.isDeleted ? 1 : 0
            let anchorKind: UInt8
            if run.anchorReplica == ReplicatingArrayStorage<Element>.noReplica && run.anchorCounter == 0 {
                anchorKind = 0
            } else if run.anchorReplica == run.replica && run.counter > 0 && run.anchorCounter == run.counter - 1 {
                anchorKind = 1
            } else if previous.length > 0 && run.anchorReplica == previous.replica && run.anchorCounter == previous.end - 1 {
                anchorKind = 2
            } else {
                anchorKind = 3
            }
            tag |= anchorKind << 1
            if run.replica != previous.replica { tag |= 8 }
            out.append(tag)
            if run.replica != previous.replica { Self.append(UInt64(run.replica), to: &out) }
            Self.append(Self.zigzag(run.counter &- previous.end), to: &out)
            Self.append(Self.zigzag((run.lamport &- run.counter) &- (previous.lamport &- previous.counter)), to: &out)
            if anchorKind == 3 {
                Self.append(UInt64(run.anchorReplica), to: &out)
                Self.append(run.anchorCounter, to: &out)
            }
            Self.append(UInt64(run.length), to: &out)
            previous = run
        }
        var fitted = ContiguousArray<UInt8>()
        fitted.reserveCapacity(out.count)
        fitted.append(contentsOf: out)
        bytes = fitted
    }

    var isEmpty: Bool { bytes.isEmpty }

    /// The runs, decoded. - Complexity: O(bytes)
    func thawed() -> ContiguousArray<Run> {
        var runs = ContiguousArray<Run>()
        var decoder = Decoder(bytes)
        runs.reserveCapacity(decoder.remaining / 4 + 1)
        while let run = decoder.next() { runs.append(run) }
        return runs
    }

    /// The index of the run holding `counter` of replica `replica`, if any, and that run; decoded
    /// as it goes, without allocating. - Complexity: O(bytes)
    func runHolding(replica: UInt16, counter: UInt64) -> (index: Int, run: Run)? {
        var decoder = Decoder(bytes)
        var index = 0
        while let run = decoder.next() {
            if run.replica == replica && run.counter <= counter && counter < run.end { return (index, run) }
            index += 1
        }
        return nil
    }

    /// Where `counter` of replica `replica` is, if in these runs: its run's index, the run, the
    /// number of visible elements before that run, and how many runs there are. Decoded as it
    /// goes, without allocating: a lookup by ID in a frozen leaf costs what a scan of a thawed
    /// leaf's runs does. - Complexity: O(bytes)
    func find(replica: UInt16, counter: UInt64) -> (index: Int, run: Run, contentStart: Int, runCount: Int)? {
        var decoder = Decoder(bytes)
        var index = 0
        var visible = 0
        var found: (index: Int, run: Run, contentStart: Int)?
        while let run = decoder.next() {
            if found == nil, run.replica == replica, run.counter <= counter, counter < run.end { found = (index, run, visible) }
            visible += run.visibleLength
            index += 1
        }
        return found.map { ($0.index, $0.run, $0.contentStart, index) }
    }

    /// The run holding visible element `index` of the leaf: its index, and the element's offset
    /// in it; decoded as it goes, without allocating. - Complexity: O(bytes)
    func runHolding(visible index: Int) -> (run: Int, offset: Int, stored: Run)? {
        var decoder = Decoder(bytes)
        var remaining = index
        var r = 0
        while let run = decoder.next() {
            if remaining < run.visibleLength { return (r, remaining, run) }
            remaining -= run.visibleLength
            r += 1
        }
        return nil
    }

    /// The smallest first counter above `counter` among the runs of replica `replica`, if any.
    func nextCounter(of replica: UInt16, after counter: UInt64) -> UInt64? {
        var decoder = Decoder(bytes)
        var best: UInt64?
        while let run = decoder.next() {
            if run.replica == replica && run.counter > counter { best = Swift.min(best ?? run.counter, run.counter) }
        }
        return best
    }

    /// Bytes reserved, for statistics.
    var reservedBytes: Int { bytes.capacity }

    /// The run before the first: replica 0, ending at counter 0 and Lamport counter 0, empty.
    private static var start: Run {
        Run(counter: 0, lamport: 0, anchorCounter: 0, replica: 0, anchorReplica: 0, length: 0, isDeleted: false)
    }

    @inline(__always)
    private static func zigzag(_ value: UInt64) -> UInt64 {
        let signed = Int64(bitPattern: value)
        return UInt64(bitPattern: (signed << 1) ^ (signed >> 63))
    }

    @inline(__always)
    private static func unzigzag(_ value: UInt64) -> UInt64 {
        UInt64(bitPattern: Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1))
    }

    @inline(__always)
    private static func append(_ value: UInt64, to out: inout ContiguousArray<UInt8>) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Reads the runs one at a time. The bytes were written by `init(_:)` of this type, so they
    /// are well formed; a malformed stream (which nothing can produce) stops the program.
    struct Decoder {
        private let bytes: ContiguousArray<UInt8>
        private var position = 0
        private var previous = FrozenRuns.start

        init(_ bytes: ContiguousArray<UInt8>) { self.bytes = bytes }

        var remaining: Int { bytes.count - position }

        @inline(__always)
        private mutating func varint() -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
                precondition(shift < 64, "frozen runs: varint too long")
            }
        }

        mutating func next() -> Run? {
            guard position < bytes.count else { return nil }
            let tag = bytes[position]
            position += 1
            let replica = tag & 8 != 0 ? UInt16(truncatingIfNeeded: varint()) : previous.replica
            let counter = previous.end &+ FrozenRuns.unzigzag(varint())
            let lamport = counter &+ ((previous.lamport &- previous.counter) &+ FrozenRuns.unzigzag(varint()))
            var anchorReplica = ReplicatingArrayStorage<Element>.noReplica
            var anchorCounter: UInt64 = 0
            switch (tag >> 1) & 3 {
            case 0: break
            case 1:
                anchorReplica = replica
                anchorCounter = counter &- 1
            case 2:
                anchorReplica = previous.replica
                anchorCounter = previous.end &- 1
            default:
                anchorReplica = UInt16(truncatingIfNeeded: varint())
                anchorCounter = varint()
            }
            let length = UInt32(truncatingIfNeeded: varint())
            let run = Run(counter: counter, lamport: lamport, anchorCounter: anchorCounter, replica: replica,
                          anchorReplica: anchorReplica, length: length, isDeleted: tag & 1 != 0)
            previous = run
            return run
        }
    }
}
