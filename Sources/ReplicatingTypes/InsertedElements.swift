/// The elements an insertion carries, in order. One element of a plain type of at most four
/// bytes (a keystroke's scalar) is held inline as its bits, so making, copying and dropping the
/// operation allocates nothing and counts no references; more share one array.
///
/// The layout does not depend on `Element` (an array reference, four bytes and a flag, in an
/// order that keeps an operation at 64 bytes), so copying an operation never goes through
/// `Element`'s value witnesses, even in code the compiler shares between specializations (it
/// did, and that cost a remote insertion as much as placing it).
public struct InsertedElements<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
    private var many: [Element] = []
    /// The bits of the one inline element, when `isInline`.
    private var inlineBits: UInt32 = 0
    private var isInline = false

    /// True when one element of this type can be held as bits: no references, at most 4 bytes.
    @inline(__always)
    private static var storesInline: Bool { _isPOD(Element.self) && MemoryLayout<Element>.size <= 4 }

    public init<C: Collection>(_ elements: C) where C.Element == Element {
        if Self.storesInline, elements.count == 1, let only = elements.first {
            withUnsafeMutableBytes(of: &inlineBits) { $0.storeBytes(of: only, as: Element.self) }
            isInline = true
        } else {
            many = Array(elements)
        }
    }

    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { isInline ? 1 : many.count }

    @inline(__always)
    private var inlineElement: Element {
        withUnsafeBytes(of: inlineBits) { $0.load(as: Element.self) }
    }

    public subscript(position: Int) -> Element {
        if isInline {
            precondition(position == 0, "InsertedElements index out of range")
            return inlineElement
        }
        return many[position]
    }

    /// Calls `body` with the elements in contiguous memory.
    public func withContiguousElements<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        if isInline {
            var only = inlineElement
            return try withUnsafePointer(to: &only) { try body(UnsafeBufferPointer(start: $0, count: 1)) }
        }
        return try many.withUnsafeBufferPointer(body)
    }
}

extension InsertedElements: Equatable where Element: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }
}

extension InsertedElements: Sendable where Element: Sendable {}

extension InsertedElements: Codable where Element: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try [Element](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}
