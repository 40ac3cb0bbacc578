/// The elements an insertion carries, in order. One element (a keystroke) is held inline, so
/// making, copying and dropping the operation counts no references; more share one array.
public struct InsertedElements<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
    private var single: Element?
    private var many: [Element] = []

    public init<C: Collection>(_ elements: C) where C.Element == Element {
        if elements.count == 1 { single = elements.first } else { many = Array(elements) }
    }

    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { single == nil ? many.count : 1 }

    public subscript(position: Int) -> Element {
        if let single {
            precondition(position == 0, "InsertedElements index out of range")
            return single
        }
        return many[position]
    }

    /// Calls `body` with the elements in contiguous memory.
    public func withContiguousElements<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        if var single { return try withUnsafePointer(to: &single) { try body(UnsafeBufferPointer(start: $0, count: 1)) } }
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
