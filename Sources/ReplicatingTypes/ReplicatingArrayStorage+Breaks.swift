/// Counting paragraph breaks among scalars without calling the break predicate per scalar.
///
/// The predicate is a pure function of the element (break counts kept per leaf and branch rely
/// on that already), so for `Unicode.Scalar` elements its answers for the 256 scalars below
/// U+0100 are asked once, when a storage is made, and kept as a table: counting the breaks of
/// a paste, a cut or a split leaf then reads narrow content byte by byte (a plain comparison
/// when one scalar, a line feed, is the only break there), and asks the predicate only about
/// wider scalars. Other element types count through the predicate as before.
struct ScalarBreakTable {
    /// Bit `v & 63` of word `v >> 6` is set when scalar `v` (below U+0100) is a break.
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The one break below U+0100 when there is exactly one, else -1.
    private(set) var onlyByte = -1
    /// False when there is no predicate or the elements are not scalars: nothing to look up.
    private(set) var isUsable = false

    init() {}

    init<Element>(_ isBreak: ((Element) -> Bool)?) {
        guard let isBreak, Element.self == Unicode.Scalar.self else { return }
        var found: [Int] = []
        for v in 0..<256 {
            let scalar = Unicode.Scalar(UInt8(v))
            if isBreak(unsafeBitCast(scalar, to: Element.self)) {
                found.append(v)
                switch v >> 6 {
                case 0: words.0 |= 1 << UInt64(v & 63)
                case 1: words.1 |= 1 << UInt64(v & 63)
                case 2: words.2 |= 1 << UInt64(v & 63)
                default: words.3 |= 1 << UInt64(v & 63)
                }
            }
        }
        onlyByte = found.count == 1 ? found[0] : -1
        isUsable = true
    }

    @inline(__always)
    func contains(_ v: UInt32) -> Bool {
        let word: UInt64
        switch v >> 6 {
        case 0: word = words.0
        case 1: word = words.1
        case 2: word = words.2
        default: word = words.3
        }
        return (word >> UInt64(v & 63)) & 1 != 0
    }

    /// Breaks among bytes that each are one scalar below U+0100.
    @inline(__always)
    func count(bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var n = 0
        if onlyByte >= 0 {
            let target = UInt8(truncatingIfNeeded: onlyByte)
            for b in bytes { n &+= b == target ? 1 : 0 }
        } else {
            for b in bytes { n &+= contains(UInt32(b)) ? 1 : 0 }
        }
        return n
    }
}

extension ReplicatingArrayStorage {
    /// Breaks among `values`, scalars' bits: the table below U+0100, the predicate above.
    @inline(__always)
    private func countBreaks(scalarValues values: UnsafeBufferPointer<UInt32>, _ isBreak: (Element) -> Bool) -> Int {
        var n = 0
        if breakTable.onlyByte >= 0 {
            // One break below U+0100 (a line feed): comparisons the compiler can vectorize, and
            // the general loop below only when a wider scalar is among them.
            let target = UInt32(breakTable.onlyByte)
            var bits: UInt32 = 0
            for v in values {
                n &+= v == target ? 1 : 0
                bits |= v
            }
            if bits < 0x100 { return n }
            n = 0
        }
        for v in values {
            if v < 0x100 {
                n &+= breakTable.contains(v) ? 1 : 0
            } else if isBreak(unsafeBitCast(v, to: Element.self)) {
                n &+= 1
            }
        }
        return n
    }

    /// Breaks among `elements` (in contiguous memory), through the table when they are scalars.
    @inline(__always)
    func countBreaks(in elements: UnsafeBufferPointer<Element>) -> Int {
        guard let isBreak else { return 0 }
        if breakTable.isUsable, let base = elements.baseAddress {
            let values = UnsafeBufferPointer(start: UnsafeRawPointer(base).assumingMemoryBound(to: UInt32.self), count: elements.count)
            return countBreaks(scalarValues: values, isBreak)
        }
        var n = 0
        for e in elements where isBreak(e) { n += 1 }
        return n
    }

    /// Breaks among elements `range` of `content`; narrow scalars are read as bytes.
    @inline(__always)
    func countBreaks(in content: LeafContent<Element>, range: Range<Int>) -> Int {
        guard let isBreak else { return 0 }
        if breakTable.isUsable, let n = content.withUnsafeScalarBytes({ bytes, shift -> Int in
            if shift == 0 { return breakTable.count(bytes: UnsafeBufferPointer(rebasing: bytes[range])) }
            var n = 0
            for i in range where isBreak(content[i]) { n += 1 }
            return n
        }) {
            return n
        }
        var n = 0
        for i in range where isBreak(content[i]) { n += 1 }
        return n
    }

    /// Breaks among all of `content`.
    @inline(__always)
    func countBreaks(in content: LeafContent<Element>) -> Int {
        countBreaks(in: content, range: 0..<content.count)
    }
}
