/// The visible elements of one leaf of a `ReplicatingArray`, in order, with O(1) access by index.
///
/// Unicode scalars are stored narrow, as CPython's strings are (PEP 393): one byte per scalar
/// while every scalar in the leaf is below U+0100, two while below U+10000, else four; a wider
/// scalar arriving widens the whole leaf, and a leaf made from part of another (a split, a
/// merge, a build) takes the narrowest width its own scalars allow. Elements of any other type
/// are stored as they are. Which of the two applies is a test of `Element`'s type, which the
/// compiler settles in code specialized for an element type, so neither pays for the other.
struct LeafContent<Element>: RandomAccessCollection {
    /// Elements of a type other than `Unicode.Scalar`.
    private var wide: ContiguousArray<Element> = []
    /// Scalars, `1 << shift` bytes each, little-endian.
    private var bytes: ContiguousArray<UInt8> = []
    private var shift: UInt8 = 0

    init() {}

    @inline(__always) static var isScalar: Bool { Element.self == Unicode.Scalar.self }

    var startIndex: Int { 0 }
    @inline(__always) var endIndex: Int { count }
    @inline(__always) var count: Int { Self.isScalar ? bytes.count &>> Int(shift) : wide.count }
    @inline(__always) var isEmpty: Bool { Self.isScalar ? bytes.isEmpty : wide.isEmpty }
    @inline(__always) func index(after i: Int) -> Int { i + 1 }
    @inline(__always) func index(before i: Int) -> Int { i - 1 }

    /// Bytes per element in this leaf (1, 2 or 4 for scalars).
    var width: Int { Self.isScalar ? 1 << Int(shift) : MemoryLayout<Element>.stride }

    subscript(position: Int) -> Element {
        @inline(__always) get {
            guard Self.isScalar else { return wide[position] }
            precondition(position >= 0 && position < count, "LeafContent index out of range")
            return bytes.withUnsafeBufferPointer { Self.scalar(at: position, in: $0, shift: shift) }
        }
    }

    @inline(__always)
    private static func scalar(at position: Int, in buffer: UnsafeBufferPointer<UInt8>, shift: UInt8) -> Element {
        let raw = UnsafeRawPointer(buffer.baseAddress!)
        let value: UInt32
        switch shift {
        case 0: value = UInt32(raw.load(fromByteOffset: position, as: UInt8.self))
        case 1: value = UInt32(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: position &<< 1, as: UInt16.self)))
        default: value = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: position &<< 2, as: UInt32.self))
        }
        return unsafeBitCast(value, to: Element.self)
    }

    /// The smallest shift that holds every scalar in `values`.
    @inline(__always)
    private static func shiftNeeded(_ values: UnsafeBufferPointer<UInt32>) -> UInt8 {
        var bits: UInt32 = 0
        for v in values { bits |= v }
        return bits < 0x100 ? 0 : bits < 0x1_0000 ? 1 : 2
    }

    /// Writes `values` at `shift` into `destination`, which holds `values.count << shift` bytes.
    @inline(__always)
    private static func encode(_ values: UnsafeBufferPointer<UInt32>, shift: UInt8, into destination: UnsafeMutableRawPointer) {
        switch shift {
        case 0:
            for i in values.indices { destination.storeBytes(of: UInt8(truncatingIfNeeded: values[i]), toByteOffset: i, as: UInt8.self) }
        case 1:
            for i in values.indices {
                destination.storeBytes(of: UInt16(truncatingIfNeeded: values[i]).littleEndian, toByteOffset: i &<< 1, as: UInt16.self)
            }
        default:
            for i in values.indices { destination.storeBytes(of: values[i].littleEndian, toByteOffset: i &<< 2, as: UInt32.self) }
        }
    }

    /// Re-encodes every scalar at the wider `newShift`.
    private mutating func widen(to newShift: UInt8) {
        let n = count
        var widened = ContiguousArray<UInt8>(repeating: 0, count: n << Int(newShift))
        let oldShift = shift
        bytes.withUnsafeBufferPointer { old in
            widened.withUnsafeMutableBytes { new in
                for i in 0..<n {
                    let value = unsafeBitCast(Self.scalar(at: i, in: old, shift: oldShift), to: UInt32.self)
                    if newShift == 1 {
                        new.storeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian, toByteOffset: i &<< 1, as: UInt16.self)
                    } else {
                        new.storeBytes(of: value.littleEndian, toByteOffset: i &<< 2, as: UInt32.self)
                    }
                }
            }
        }
        bytes = widened
        shift = newShift
    }

    /// Inserts `elements` at `index`.
    /// - Complexity: O(count + elements.count)
    @inline(__always)
    mutating func insert(contentsOf elements: UnsafeBufferPointer<Element>, at index: Int) {
        guard Self.isScalar else {
            wide.insert(contentsOf: elements, at: index)
            return
        }
        precondition(index >= 0 && index <= count, "LeafContent insertion index out of range")
        guard let base = elements.baseAddress, !elements.isEmpty else { return }
        let values = UnsafeBufferPointer(start: UnsafeRawPointer(base).assumingMemoryBound(to: UInt32.self), count: elements.count)
        let needed = Self.shiftNeeded(values)
        if needed > shift { widen(to: needed) }
        let s = shift
        if values.count == 1, s == 0 {
            // A keystroke of Latin-1 text: one byte.
            bytes.insert(UInt8(truncatingIfNeeded: values[0]), at: index)
            return
        }
        let byteCount = values.count << Int(s)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: byteCount) { scratch in
            Self.encode(values, shift: s, into: UnsafeMutableRawPointer(scratch.baseAddress!))
            bytes.insert(contentsOf: UnsafeBufferPointer(scratch), at: index << Int(s))
        }
    }

    /// Inserts `elements` at `index`, through a buffer (their own, or scratch memory that a
    /// short collection, a keystroke, takes on the stack).
    @inline(__always)
    mutating func insert<C: Collection>(contentsOf elements: C, at index: Int) where C.Element == Element {
        if elements.withContiguousStorageIfAvailable({ insert(contentsOf: $0, at: index) }) != nil { return }
        let n = elements.count
        withUnsafeTemporaryAllocation(of: Element.self, capacity: Swift.max(n, 1)) { scratch in
            var i = 0
            for element in elements where i < n {
                (scratch.baseAddress! + i).initialize(to: element)
                i += 1
            }
            insert(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<i]), at: index)
            scratch.baseAddress!.deinitialize(count: i)
        }
    }

    mutating func append<C: Collection>(contentsOf elements: C) where C.Element == Element {
        insert(contentsOf: elements, at: count)
    }

    /// Appends `other`'s elements, byte for byte when both have the same width.
    mutating func append(contentsOf other: LeafContent) {
        guard Self.isScalar else {
            wide.append(contentsOf: other.wide)
            return
        }
        if other.shift > shift { widen(to: other.shift) }
        if other.shift == shift {
            bytes.append(contentsOf: other.bytes)
        } else {
            append(contentsOf: other[...])
        }
    }

    mutating func removeSubrange(_ range: Range<Int>) {
        guard Self.isScalar else {
            wide.removeSubrange(range)
            return
        }
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "LeafContent range out of bounds")
        bytes.removeSubrange((range.lowerBound << Int(shift))..<(range.upperBound << Int(shift)))
    }

    /// Removes the elements from `index` on and returns them as content of their own, at the
    /// narrowest width they allow.
    mutating func removeSuffix(from index: Int) -> LeafContent {
        var suffix = LeafContent()
        if Self.isScalar, shift == 0 {
            // One byte each is already the narrowest: the bytes are copied as they are.
            precondition(index >= 0 && index <= count, "LeafContent index out of range")
            suffix.bytes = ContiguousArray(bytes[index...])
        } else {
            suffix.append(contentsOf: self[index...])
        }
        removeSubrange(index..<count)
        return suffix
    }

    mutating func reserveCapacity(_ n: Int) {
        if Self.isScalar { bytes.reserveCapacity(n << Int(shift)) } else { wide.reserveCapacity(n) }
    }

    /// Bytes reserved for elements, for statistics.
    var reservedBytes: Int { bytes.capacity + wide.capacity * MemoryLayout<Element>.stride }

    /// Gives back memory when at most half of what is reserved is used (after a split or a
    /// large removal).
    @inline(__always)
    mutating func trimCapacity() {
        if Self.isScalar { Self.trim(&bytes) } else { Self.trim(&wide) }
    }

    /// Gives back every byte of room beyond the elements (a storage built to be kept as it is).
    mutating func fitCapacity() {
        if Self.isScalar { Self.fit(&bytes) } else { Self.fit(&wide) }
    }

    private static func fit<T>(_ array: inout ContiguousArray<T>) {
        guard array.capacity > array.count else { return }
        var fitted = ContiguousArray<T>()
        fitted.reserveCapacity(array.count)
        fitted.append(contentsOf: array)
        array = fitted
    }

    @inline(__always)
    private static func trim<T>(_ array: inout ContiguousArray<T>) {
        guard array.capacity > 2 * array.count + 16 else { return }
        var trimmed = ContiguousArray<T>()
        trimmed.reserveCapacity(array.count)
        trimmed.append(contentsOf: array)
        array = trimmed
    }

    /// Calls `body` with the elements as one buffer (decoded into scratch memory when narrow).
    /// - Complexity: O(count) for narrow scalars, O(1) otherwise
    func withUnsafeElements<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        guard Self.isScalar else { return try wide.withUnsafeBufferPointer(body) }
        let n = count
        let s = shift
        return try withUnsafeTemporaryAllocation(of: Element.self, capacity: Swift.max(n, 1)) { scratch in
            bytes.withUnsafeBufferPointer { source in
                for i in 0..<n { (scratch.baseAddress! + i).initialize(to: Self.scalar(at: i, in: source, shift: s)) }
            }
            return try body(UnsafeBufferPointer(rebasing: scratch[..<n]))
        }
    }

    /// Calls `body` with the stored bytes and the bytes per element, for readers that decode
    /// narrow scalars themselves (UTF-8 output); nil for elements that are not scalars.
    func withUnsafeScalarBytes<R>(_ body: (UnsafeBufferPointer<UInt8>, _ shift: Int) throws -> R) rethrows -> R? {
        guard Self.isScalar else { return nil }
        return try bytes.withUnsafeBufferPointer { try body($0, Int(shift)) }
    }
}
