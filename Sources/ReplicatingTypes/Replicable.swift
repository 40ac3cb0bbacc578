/// A state-based CRDT: any two states merge into one, whatever order replicas exchange them in.
///
/// Laws every conforming type keeps (and the tests check over random histories):
/// 1. commutative: `a.merged(with: b) == b.merged(with: a)`
/// 2. associative: `a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c))`
/// 3. idempotent: `a.merged(with: a) == a`
/// Equality here is equality of the replicated state; a value's local replica (who edits next)
/// is not part of it, and `merged(with:)` keeps the receiver's.
public protocol Replicable {
    func merged(with other: Self) -> Self
}

extension Replicable {
    public mutating func merge(with other: Self) {
        self = merged(with: other)
    }
}
