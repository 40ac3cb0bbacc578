/// A grow-only set: elements can be added, never removed; merge is union.
///
/// Guarantees: every element any replica added is in every merged state.
public struct ReplicatingAddOnlySet<Element: Hashable> {
    public private(set) var values: Set<Element>

    public init() { values = [] }

    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        values = Set(elements)
    }

    /// - Complexity: O(1) amortized
    public mutating func insert(_ element: Element) {
        values.insert(element)
    }

    public func contains(_ element: Element) -> Bool { values.contains(element) }
    public var count: Int { values.count }
}

extension ReplicatingAddOnlySet: Replicable {
    public func merged(with other: ReplicatingAddOnlySet) -> ReplicatingAddOnlySet {
        var result = self
        result.values.formUnion(other.values)
        return result
    }
}

extension ReplicatingAddOnlySet: Equatable {}
extension ReplicatingAddOnlySet: Hashable {}
extension ReplicatingAddOnlySet: Sendable where Element: Sendable {}
extension ReplicatingAddOnlySet: Codable where Element: Codable {}
