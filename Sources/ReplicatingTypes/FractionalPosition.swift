/// A dense sort key: between any two distinct positions another one can always be made.
///
/// Model: a sequence of base-65536 digits read as a fraction in [0, 1); compared lexicographically
/// with a missing digit counting as 0. Guarantees: `between(a, b)` is strictly between `a` and
/// `b` whenever `a < b`, and never ends in a zero digit, so keys stay short under repeated splits.
public struct FractionalPosition: Hashable, Comparable, Sendable, Codable {
    public private(set) var digits: [UInt16]

    public init(digits: [UInt16]) {
        var digits = digits
        while digits.last == 0 { digits.removeLast() }
        self.digits = digits
    }

    public static let start = FractionalPosition(digits: [])

    public static func < (lhs: FractionalPosition, rhs: FractionalPosition) -> Bool {
        let n = Swift.max(lhs.digits.count, rhs.digits.count)
        for i in 0..<n {
            let a = i < lhs.digits.count ? lhs.digits[i] : 0
            let b = i < rhs.digits.count ? rhs.digits[i] : 0
            if a != b { return a < b }
        }
        return false
    }

    /// A position strictly between `lower` (nil: the start) and `upper` (nil: the end).
    /// - Complexity: O(length of the keys)
    public static func between(_ lower: FractionalPosition?, _ upper: FractionalPosition?) -> FractionalPosition {
        let low = lower?.digits ?? []
        let high = upper?.digits ?? []
        var result: [UInt16] = []
        var i = 0
        // An upper bound not above the lower one leaves no room: place after the lower bound instead.
        var highBounded = upper.map { (lower ?? .start) < $0 } ?? false
        while true {
            let a = Int(i < low.count ? low[i] : 0)
            let b = highBounded ? Int(i < high.count ? high[i] : 0) : 0x1_0000
            if b - a > 1 {
                result.append(UInt16((a + b) / 2))
                return FractionalPosition(digits: result)
            }
            result.append(UInt16(a))
            if b - a == 1 { highBounded = false }
            i += 1
        }
    }
}
