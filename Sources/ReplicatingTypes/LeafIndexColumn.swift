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
    /// Elements the last chunk has room for: a power of two from 64 up to `chunkSize`, so a
    /// small document's index is about its size, not a whole 16 KiB chunk (every other chunk
    /// is full, and so `chunkSize` long).
    private var lastCapacity = 0

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
            let take = Swift.min(Self.chunkSize - used, remaining)
            if used == 0 {
                lastCapacity = Self.capacity(for: take)
                chunks.append(UnsafeMutablePointer<UInt32>.allocate(capacity: lastCapacity))
            } else if used + take > lastCapacity {
                growLastChunk(toHold: used + take)
            }
            (chunks[chunks.count - 1] + used).initialize(repeating: leaf, count: take)
            count += take
            remaining -= take
        }
    }

    /// Room for `n` elements in a chunk: a power of two from 64 up to `chunkSize`.
    static func capacity(for n: Int) -> Int {
        var capacity = 64
        while capacity < n && capacity < chunkSize { capacity <<= 1 }
        return capacity
    }

    /// Moves the last chunk's elements to a chunk with room for `needed` (at least twice the room
    /// it had, at most `chunkSize`).
    @inline(never)
    private mutating func growLastChunk(toHold needed: Int) {
        let used = count & (Self.chunkSize - 1)
        let capacity = Self.capacity(for: Swift.max(needed, 2 * lastCapacity))
        let old = chunks[chunks.count - 1]
        let grown = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        grown.moveInitialize(from: old, count: used)
        old.deallocate()
        chunks[chunks.count - 1] = grown
        lastCapacity = capacity
    }

    /// Sets counters `range` to `leaf`.
    func assign(_ leaf: UInt32, to range: Range<Int>) {
        for c in range { self[c] = leaf }
    }

    /// Frees the chunks; the owning storage calls this once, from its `deinit`.
    func deallocate() {
        for chunk in chunks { chunk.deallocate() }
    }

    var reservedBytes: Int { chunks.isEmpty ? 0 : ((chunks.count - 1) * Self.chunkSize + lastCapacity) * 4 }
}
