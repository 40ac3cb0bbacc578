/// For one replica, the leaf number of each of its elements by counter, held as runs: counters
/// are cut into chunks of `chunkSize`, and each chunk lists where a run of counters in one leaf
/// starts and which leaf it is. Text typed or opened in one go is one entry per leaf it spans
/// (one per line of code), not one number per character, and a range dropped by compaction is
/// one entry per chunk.
///
/// Guarantees: in every chunk the entries' starts are strictly increasing from 0, and
/// neighbouring entries name different leaves (`checkInvariants()`). Reading a counter is a
/// binary search within one chunk; `assign` changes at most two entries' worth of one chunk per
/// chunk it touches, so its cost is bounded by a chunk, never by the whole column.
///
/// The chunks are raw memory that the owning storage frees (`deallocate()`, from its `deinit`):
/// appending to the last run writes one count, with no uniqueness check. A column is therefore
/// never copied to be changed; a storage is copied column by column into new ones.
struct LeafIndexColumn {
    static var chunkBits: Int { 12 }
    static var chunkSize: Int { 1 << chunkBits }
    static var firstChunkCapacity: Int { 4 }

    /// Counters `start` (within the chunk) up to the next entry's start (or the chunk's end) are
    /// in leaf `leaf`.
    struct Entry: Equatable {
        var start: UInt32
        var leaf: UInt32
    }

    /// One chunk's entries: `count` of them at `base`, room for `capacity`.
    struct Chunk {
        var base: UnsafeMutablePointer<Entry>
        var count: Int32
        var capacity: Int32
    }

    private var chunks: ContiguousArray<Chunk> = []
    private(set) var count = 0
    /// The leaf of the last counter (meaningless while the column is empty).
    private var lastLeaf: UInt32 = 0

    @inline(__always)
    subscript(counter: Int) -> UInt32 {
        precondition(counter >= 0 && counter < count, "counter out of range")
        let chunk = chunks[counter >> Self.chunkBits]
        let i = Self.entryIndex(holding: UInt32(counter & (Self.chunkSize - 1)), in: chunk)
        return chunk.base[i].leaf
    }

    /// The index of the last entry of `chunk` whose start is at most `offset`.
    @inline(__always)
    private static func entryIndex(holding offset: UInt32, in chunk: Chunk) -> Int {
        // The last entry is the usual answer (typing appends there); check it first.
        let last = Int(chunk.count) &- 1
        if chunk.base[last].start <= offset { return last }
        return firstEntry(from: offset &+ 1, in: chunk) &- 1
    }

    /// The index of the first entry of `chunk` whose start is at least `offset` (`count` if none).
    /// Without branches on the comparisons (they mispredict half the time): conditional moves.
    @inline(__always)
    private static func firstEntry(from offset: UInt32, in chunk: Chunk) -> Int {
        var first = 0
        var length = Int(chunk.count)
        while length > 0 {
            let half = length >> 1
            let probe = first &+ half
            let less = chunk.base[probe].start < offset
            first = less ? probe &+ 1 : first
            length = less ? length &- half &- 1 : half
        }
        return first
    }

    /// Adds `n` counters in leaf `leaf` at the end.
    @inline(__always)
    mutating func append(_ leaf: UInt32, count n: Int) {
        // Typing on in the leaf of the last run, within the last chunk: one count to write.
        let used = count & (Self.chunkSize - 1)
        if used != 0, leaf == lastLeaf, n <= Self.chunkSize - used {
            count += n
            return
        }
        appendEntries(leaf, count: n)
    }

    @inline(never)
    private mutating func appendEntries(_ leaf: UInt32, count n: Int) {
        var remaining = n
        while remaining > 0 {
            let used = count & (Self.chunkSize - 1)
            let take = Swift.min(Self.chunkSize - used, remaining)
            if used == 0 {
                let base = UnsafeMutablePointer<Entry>.allocate(capacity: Self.firstChunkCapacity)
                base.initialize(to: Entry(start: 0, leaf: leaf))
                chunks.append(Chunk(base: base, count: 1, capacity: Int32(Self.firstChunkCapacity)))
            } else {
                let c = chunks.count - 1
                if chunks[c].base[Int(chunks[c].count) - 1].leaf != leaf {
                    Self.insert(Entry(start: UInt32(used), leaf: leaf), at: Int(chunks[c].count), into: &chunks[c])
                }
            }
            count += take
            remaining -= take
        }
        lastLeaf = leaf
    }

    /// Reads the leaf of the last counter again after entries changed.
    private mutating func refreshLastLeaf() {
        guard let last = chunks.last else { return }
        lastLeaf = last.base[Int(last.count) - 1].leaf
    }

    /// Makes room for one more entry at `index` of `chunk` and writes it there.
    private static func insert(_ entry: Entry, at index: Int, into chunk: inout Chunk) {
        resize(&chunk, removing: index..<index, inserting: 1)
        chunk.base[index] = entry
    }

    /// Replaces entries `range` of `chunk` by `inserted` entries (left for the caller to write),
    /// growing the chunk's memory when it is full.
    private static func resize(_ chunk: inout Chunk, removing range: Range<Int>, inserting inserted: Int) {
        let count = Int(chunk.count)
        let newCount = count - range.count + inserted
        let tail = count - range.upperBound
        if newCount > Int(chunk.capacity) {
            let capacity = Swift.min(Swift.max(newCount, 2 * Int(chunk.capacity)), chunkSize)
            let grown = UnsafeMutablePointer<Entry>.allocate(capacity: capacity)
            grown.moveInitialize(from: chunk.base, count: range.lowerBound)
            (grown + range.lowerBound + inserted).moveInitialize(from: chunk.base + range.upperBound, count: tail)
            chunk.base.deallocate()
            chunk.base = grown
            chunk.capacity = Int32(capacity)
        } else if inserted != range.count {
            // Entries are plain numbers: moving them is a memmove, overlapping or not.
            (chunk.base + range.lowerBound + inserted).moveInitialize(from: chunk.base + range.upperBound, count: tail)
        }
        chunk.count = Int32(newCount)
    }

    /// Sets counters `range` (within the column) to `leaf`.
    mutating func assign(_ leaf: UInt32, to range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "counters out of range")
        var low = range.lowerBound
        while low < range.upperBound {
            let c = low >> Self.chunkBits
            let chunkStart = c << Self.chunkBits
            let high = Swift.min(range.upperBound, chunkStart + Self.chunkSize)
            let used = Swift.min(count - chunkStart, Self.chunkSize)
            Self.assign(leaf, from: UInt32(low - chunkStart), to: UInt32(high - chunkStart), used: UInt32(used), in: &chunks[c])
            low = high
        }
        refreshLastLeaf()
    }

    /// Sets offsets `low..<high` of one chunk (of which `used` counters exist) to `leaf`.
    private static func assign(_ leaf: UInt32, from low: UInt32, to high: UInt32, used: UInt32, in chunk: inout Chunk) {
        // Entries starting in low...high go; at most two come back: `leaf` from `low` unless the
        // entry before already names it, and the leaf that held `high` from `high` unless it is
        // `leaf` or `high` is the chunk's end.
        // Splits usually move the newest counters (the chunk's last entries): check the last
        // entry before searching, and walk to `b` (the entries between go anyway).
        let a = chunk.base[Int(chunk.count) - 1].start < low ? Int(chunk.count) : firstEntry(from: low, in: chunk)
        var b = a
        while b < Int(chunk.count) && chunk.base[b].start <= high { b += 1 }
        let before: UInt32? = a > 0 ? chunk.base[a - 1].leaf : nil
        let after: UInt32? = high < used ? chunk.base[b - 1].leaf : nil
        var replacement = (Entry(start: 0, leaf: 0), Entry(start: 0, leaf: 0))
        var n = 0
        if before != leaf {
            replacement.0 = Entry(start: low, leaf: leaf)
            n = 1
        }
        if let after, after != leaf {
            if n == 0 { replacement.0 = Entry(start: high, leaf: after) } else { replacement.1 = Entry(start: high, leaf: after) }
            n += 1
        }
        resize(&chunk, removing: a..<b, inserting: n)
        if n > 0 { chunk.base[a] = replacement.0 }
        if n > 1 { chunk.base[a + 1] = replacement.1 }
    }

    /// True when every counter in `range` (within the column) is in `leaf`.
    func allEqual(_ leaf: UInt32, in range: Range<Int>) -> Bool {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "counters out of range")
        var low = range.lowerBound
        while low < range.upperBound {
            let c = low >> Self.chunkBits
            let chunkStart = c << Self.chunkBits
            let high = Swift.min(range.upperBound, chunkStart + Self.chunkSize)
            let chunk = chunks[c]
            var i = Self.entryIndex(holding: UInt32(low - chunkStart), in: chunk)
            while i < Int(chunk.count) && Int(chunk.base[i].start) < high - chunkStart {
                if chunk.base[i].leaf != leaf { return false }
                i += 1
            }
            low = high
        }
        return true
    }

    /// Turns every counter in leaf `old` into leaf `new`.
    mutating func replace(_ old: UInt32, with new: UInt32) {
        for c in chunks.indices {
            let chunkStart = c << Self.chunkBits
            let used = Swift.min(count - chunkStart, Self.chunkSize)
            var i = 0
            while i < Int(chunks[c].count) {
                let entry = chunks[c].base[i]
                let end = i + 1 < Int(chunks[c].count) ? Int(chunks[c].base[i + 1].start) : used
                if entry.leaf == old {
                    // Re-assigning may merge neighbours; continue from the entry now holding `start`.
                    Self.assign(new, from: entry.start, to: UInt32(end), used: UInt32(used), in: &chunks[c])
                    i = Self.entryIndex(holding: entry.start, in: chunks[c]) + 1
                } else {
                    i += 1
                }
            }
        }
        refreshLastLeaf()
    }

    /// Lets the counters marked `gap` (dropped by compaction) read as the leaf of the entry before
    /// them (or after them, at a chunk's start), so that a gap costs no entries of its own, and
    /// fits each chunk's memory to its entries. A chunk of nothing but gaps keeps its one entry.
    /// The owner must still tell a gap from a stored counter: the leaf named does not hold it.
    /// - Complexity: O(entries)
    mutating func absorb(_ gap: UInt32) {
        for c in chunks.indices {
            let chunk = chunks[c]
            let n = Int(chunk.count)
            // The leaf a gap at the chunk's start takes: the first entry that is not a gap.
            var fill = gap
            for i in 0..<n where chunk.base[i].leaf != gap {
                fill = chunk.base[i].leaf
                break
            }
            var kept = 0
            for i in 0..<n {
                var entry = chunk.base[i]
                if entry.leaf == gap { entry.leaf = fill }
                fill = entry.leaf
                if kept > 0, chunk.base[kept - 1].leaf == entry.leaf { continue }
                if kept == 0 { entry.start = 0 }
                chunk.base[kept] = entry
                kept += 1
            }
            let fitted = UnsafeMutablePointer<Entry>.allocate(capacity: kept)
            fitted.moveInitialize(from: chunk.base, count: kept)
            chunk.base.deallocate()
            chunks[c] = Chunk(base: fitted, count: Int32(kept), capacity: Int32(kept))
        }
        if chunks.capacity > chunks.count {
            var fitted = ContiguousArray<Chunk>()
            fitted.reserveCapacity(chunks.count)
            fitted.append(contentsOf: chunks)
            chunks = fitted
        }
        refreshLastLeaf()
    }

    /// The end (within the column) of the entry holding `counter`: the counters from `counter`
    /// up to it all read as one leaf.
    func entryEnd(holding counter: Int) -> Int {
        precondition(counter >= 0 && counter < count, "counter out of range")
        let c = counter >> Self.chunkBits
        let chunkStart = c << Self.chunkBits
        let chunk = chunks[c]
        let i = Self.entryIndex(holding: UInt32(counter - chunkStart), in: chunk)
        return i + 1 < Int(chunk.count) ? chunkStart + Int(chunk.base[i + 1].start) : Swift.min(count, chunkStart + Self.chunkSize)
    }

    /// The runs of the column in counter order: each entry's first counter (within the whole
    /// column), length and leaf. For tests and statistics.
    var runs: [(counter: Int, length: Int, leaf: UInt32)] {
        var result: [(counter: Int, length: Int, leaf: UInt32)] = []
        for c in chunks.indices {
            let chunkStart = c << Self.chunkBits
            let used = Swift.min(count - chunkStart, Self.chunkSize)
            for i in 0..<Int(chunks[c].count) {
                let start = Int(chunks[c].base[i].start)
                let end = i + 1 < Int(chunks[c].count) ? Int(chunks[c].base[i + 1].start) : used
                result.append((chunkStart + start, end - start, chunks[c].base[i].leaf))
            }
        }
        return result
    }

    /// Stops the program when the entries break the guarantees in this type's comment.
    func checkInvariants() {
        precondition(chunks.count == (count + Self.chunkSize - 1) >> Self.chunkBits, "chunk count")
        for c in chunks.indices {
            let chunk = chunks[c]
            let used = Swift.min(count - (c << Self.chunkBits), Self.chunkSize)
            precondition(chunk.count >= 1 && chunk.count <= chunk.capacity, "chunk entry count")
            precondition(chunk.base[0].start == 0, "a chunk's first entry starts it")
            for i in 1..<Int(chunk.count) {
                precondition(chunk.base[i].start > chunk.base[i - 1].start, "entries out of order")
                precondition(chunk.base[i].leaf != chunk.base[i - 1].leaf, "neighbouring entries name one leaf")
            }
            precondition(Int(chunk.base[Int(chunk.count) - 1].start) < used, "an entry past the chunk's counters")
        }
        if let last = chunks.last { precondition(last.base[Int(last.count) - 1].leaf == lastLeaf, "the last leaf's cache") }
    }

    /// Frees the chunks; the owning storage calls this once, from its `deinit`.
    func deallocate() {
        for chunk in chunks { chunk.base.deallocate() }
    }

    /// Number of entries, for statistics.
    var entryCount: Int { chunks.reduce(0) { $0 + Int($1.count) } }

    var reservedBytes: Int {
        var total = chunks.capacity * MemoryLayout<Chunk>.stride
        for chunk in chunks { total += Int(chunk.capacity) * MemoryLayout<Entry>.stride }
        return total
    }
}
