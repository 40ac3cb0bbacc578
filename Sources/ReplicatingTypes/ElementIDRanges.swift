/// The elements a removal names: ranges of consecutive counters of one replica each, in order.
///
/// Guarantees: a collection of `ElementIDRange` like an array, that holds one range (a keystroke,
/// a selection typed over) inline, so the common removal allocates nothing. Encodes exactly as an
/// array of ranges.
public struct ElementIDRanges: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral, Hashable, Sendable {
    /// The first range; nil only when there is none (then `rest` is empty too).
    private var first_: ElementIDRange?
    /// The ranges after the first.
    private var rest: [ElementIDRange] = []

    public init() {}

    public init<S: Sequence>(_ ranges: S) where S.Element == ElementIDRange {
        for range in ranges { append(range) }
    }

    public init(arrayLiteral ranges: ElementIDRange...) {
        self.init(ranges)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { first_ == nil ? 0 : 1 + rest.count }

    public subscript(position: Int) -> ElementIDRange {
        get {
            precondition(position >= 0 && position < endIndex, "ElementIDRanges index out of range")
            if position == 0, let first_ { return first_ }
            return rest[position - 1]
        }
        set {
            precondition(position >= 0 && position < endIndex, "ElementIDRanges index out of range")
            if position == 0 { first_ = newValue } else { rest[position - 1] = newValue }
        }
    }

    public mutating func append(_ range: ElementIDRange) {
        if first_ == nil { first_ = range } else { rest.append(range) }
    }
}

extension ElementIDRanges: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try [ElementIDRange](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try Array(self).encode(to: encoder)
    }
}

extension ElementIDRanges: CustomStringConvertible {
    public var description: String { Array(self).description }
}
