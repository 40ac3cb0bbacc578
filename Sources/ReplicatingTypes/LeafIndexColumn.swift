/// For one replica, the leaf number of each of its elements by counter, in fixed-size chunks:
/// appends never copy what is there, and at most one chunk is partly empty.
struct LeafIndexColumn {
    static var chunkBits: Int { 12 }
    static var chunkSize: Int { 1 << chunkBits }

    private var chunks: ContiguousArray<ContiguousArray<UInt32>> = []
    private(set) var count = 0

    @inline(__always)
    subscript(counter: Int) -> UInt32 {
        get { chunks[counter >> Self.chunkBits][counter & (Self.chunkSize - 1)] }
        set { chunks[counter >> Self.chunkBits][counter & (Self.chunkSize - 1)] = newValue }
    }

    @inline(__always)
    mutating func append(_ leaf: UInt32, count n: Int) {
        var remaining = n
        while remaining > 0 {
            if count & (Self.chunkSize - 1) == 0 {
                var chunk = ContiguousArray<UInt32>()
                chunk.reserveCapacity(Self.chunkSize)
                chunks.append(chunk)
            }
            let room = Self.chunkSize - (count & (Self.chunkSize - 1))
            let take = Swift.min(room, remaining)
            if take == 1 {
                chunks[chunks.count - 1].append(leaf)
            } else {
                chunks[chunks.count - 1].append(contentsOf: repeatElement(leaf, count: take))
            }
            count += take
            remaining -= take
        }
    }

    /// Sets counters `range` to `leaf`.
    mutating func assign(_ leaf: UInt32, to range: Range<Int>) {
        for c in range { self[c] = leaf }
    }

    var reservedBytes: Int { chunks.reduce(0) { $0 + $1.capacity * 4 } }
}
