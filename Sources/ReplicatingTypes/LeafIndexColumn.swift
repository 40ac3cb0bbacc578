/// For one replica, the leaf number of each of its elements by counter, in fixed-size chunks:
/// appends never copy what is there, and at most one chunk is partly empty.
///
/// The chunks are raw memory that the owning storage frees (`deallocate()`, from its `deinit`):
/// an append writes one number, with no uniqueness check. A column is therefore never copied
/// to be changed; a storage is copied column by column into new ones.
struct LeafIndexColumn {
    static var chunkBits: Int { 12 }
    static var chunkSize: Int { 1 << chunkBits }

    private var chunks: ContiguousArray<UnsafeMutablePointer<UInt32>> = []
    private(set) var count = 0

    @inline(__always)
    subscript(counter: Int) -> UInt32 {
        get {
            precondition(counter >= 0 && counter < count, "counter out of range")
            return chunks[counter >> Self.chunkBits][counter & (Self.chunkSize - 1)]
        }
        nonmutating set {
            precondition(counter >= 0 && counter < count, "counter out of range")
            chunks[counter >> Self.chunkBits][counter & (Self.chunkSize - 1)] = newValue
        }
    }

    @inline(__always)
    mutating func append(_ leaf: UInt32, count n: Int) {
        var remaining = n
        while remaining > 0 {
            let used = count & (Self.chunkSize - 1)
            if used == 0 {
                let chunk = UnsafeMutablePointer<UInt32>.allocate(capacity: Self.chunkSize)
                chunks.append(chunk)
            }
            let take = Swift.min(Self.chunkSize - used, remaining)
            (chunks[chunks.count - 1] + used).initialize(repeating: leaf, count: take)
            count += take
            remaining -= take
        }
    }

    /// Sets counters `range` to `leaf`.
    func assign(_ leaf: UInt32, to range: Range<Int>) {
        for c in range { self[c] = leaf }
    }

    /// Frees the chunks; the owning storage calls this once, from its `deinit`.
    func deallocate() {
        for chunk in chunks { chunk.deallocate() }
    }

    var reservedBytes: Int { chunks.count * Self.chunkSize * 4 }
}
