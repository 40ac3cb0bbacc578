import Crypto
import ReplicatingTypes

/// Who may do what in a shared project, replicated: every daemon of the project holds the same
/// set of signed `RosterChange`s and works out the same roles from it (protocol/decisions/roles.md).
///
/// Model: the roles are a replay of every change in one total order (`RosterChange.replayOrder`:
/// Lamport counter, then author, subject, role), starting from the founder as the one owner. A
/// change takes effect only if its author is an owner at that point of the replay, and not if it
/// would leave the project without an owner. So a change an owner made after being removed (by a
/// change earlier in the order) does not count, concurrent changes have one outcome everywhere,
/// and a writer or reader can change nothing.
///
/// Guarantees:
/// 1. the roles are a function of the set of changes alone: any delivery order, duplicates and
///    merges give equal rosters;
/// 2. there is always at least one owner;
/// 3. only changes whose signature verifies for this project are kept, at most `maximumChanges`,
///    naming at most `maximumMembers` keys; `apply` of anything else changes nothing.
public struct ProjectRoster: Sendable, Equatable {
    public static let maximumChanges = 4_096
    public static let maximumMembers = 1_024

    /// The project's key (`DocumentScope`'s), part of what every change signs.
    public let projectKey: String
    /// The key of the daemon that shared the project: its first owner.
    public let founder: MemberKey
    /// Every change kept: a grow-only set (the library's `ReplicatingAddOnlySet`), since the roles
    /// are a function of it alone.
    public private(set) var changeSet = ReplicatingAddOnlySet<RosterChange>()
    /// The same, as a plain set.
    public var changes: Set<RosterChange> { changeSet.values }
    /// The same changes in replay order, kept sorted as they arrive (a replay is then O(n)).
    public private(set) var orderedChanges: [RosterChange] = []
    /// Each member's role as the replay gives it; a key not here has no access.
    public private(set) var roles: [MemberKey: ProjectRole]
    /// Keys a change that took effect removed (and no later one readmitted): told so, refused.
    public private(set) var removed: Set<MemberKey> = []
    /// Keys that were an owner at some point of the replay (the founder among them): the only
    /// authors whose changes a daemon takes from a peer (others could only fill the roster).
    public private(set) var everOwners: Set<MemberKey>
    /// Every key any kept change names.
    private var named: Set<MemberKey>
    private var clock: UInt64 = 0

    public init(projectKey: String, founder: MemberKey) {
        self.projectKey = projectKey
        self.founder = founder
        roles = [founder: .owner]
        named = [founder]
        everOwners = [founder]
    }

    /// Every key a kept change names (and the founder).
    public var namedKeys: Set<MemberKey> { named }

    public func role(of key: MemberKey) -> ProjectRole? { roles[key] }

    /// Applies one change (local or from a peer); returns whether the set of changes grew.
    @discardableResult
    public mutating func apply(_ change: RosterChange) throws(RosterRefusal) -> Bool {
        try apply(contentsOf: [change]) > 0
    }

    /// Applies a batch, replaying once; returns how many changes were new. A batch with any
    /// change refused applies none of it.
    @discardableResult
    public mutating func apply(contentsOf batch: [RosterChange]) throws(RosterRefusal) -> Int {
        var fresh: [RosterChange] = []
        var newKeys: Set<MemberKey> = []
        for change in batch where !changeSet.contains(change) && !fresh.contains(change) {
            guard change.counter < RosterChange.maximumCounter else { throw .clockExhausted }
            guard change.verify(projectKey: projectKey) else { throw .badSignature }
            for key in [change.subject, change.author] where !named.contains(key) { newKeys.insert(key) }
            fresh.append(change)
        }
        guard !fresh.isEmpty else { return 0 }
        guard changeSet.count + fresh.count <= Self.maximumChanges else { throw .tooManyChanges }
        guard named.count + newKeys.count <= Self.maximumMembers else { throw .tooManyMembers }
        for change in fresh {
            changeSet.insert(change)
            orderedChanges.insert(change, at: insertionIndex(of: change))
            clock = max(clock, change.counter)
        }
        named.formUnion(newKeys)
        replay()
        return fresh.count
    }

    /// Makes a change here, signed by `signer`: refused unless `signer`'s key is an owner now and
    /// the change leaves an owner.
    @discardableResult
    public mutating func change(_ subject: MemberKey, to role: ProjectRole?, signer: Curve25519.Signing.PrivateKey) throws(RosterRefusal) -> RosterChange {
        guard let author = MemberKey(Array(signer.publicKey.rawRepresentation)) else { throw .badKey }
        guard roles[author] == .owner else { throw .notAnOwner }
        if role != .owner, roles[subject] == .owner, roles.values.filter({ $0 == .owner }).count == 1 { throw .lastOwner }
        guard clock + 1 < RosterChange.maximumCounter else { throw .clockExhausted }
        let change: RosterChange
        do {
            change = try RosterChange.signed(subject: subject, role: role, counter: clock + 1, projectKey: projectKey, signer: signer)
        } catch {
            throw .badKey
        }
        try apply(change)
        return change
    }

    /// This roster and `other`'s changes together (the project keys and founders must agree).
    public func merged(with other: ProjectRoster) -> ProjectRoster {
        var result = self
        _ = try? result.apply(contentsOf: Array(other.changes))
        return result
    }

    /// Where `change` goes in `orderedChanges` (binary search).
    private func insertionIndex(of change: RosterChange) -> Int {
        var low = 0, high = orderedChanges.count
        while low < high {
            let middle = (low + high) / 2
            if RosterChange.replayOrder(orderedChanges[middle], change) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func replay() {
        var roles: [MemberKey: ProjectRole] = [founder: .owner]
        var removed: Set<MemberKey> = []
        var everOwners: Set<MemberKey> = [founder]
        var owners = 1
        for change in orderedChanges {
            guard roles[change.author] == .owner else { continue }
            let before = roles[change.subject]
            if before == .owner, change.role != .owner, owners == 1 { continue }
            if before == .owner { owners -= 1 }
            if change.role == .owner { owners += 1 }
            if change.role == .owner { everOwners.insert(change.subject) }
            if let role = change.role {
                roles[change.subject] = role
                removed.remove(change.subject)
            } else {
                roles[change.subject] = nil
                removed.insert(change.subject)
            }
        }
        self.roles = roles
        self.removed = removed
        self.everOwners = everOwners
    }

    public static func == (lhs: ProjectRoster, rhs: ProjectRoster) -> Bool {
        lhs.projectKey == rhs.projectKey && lhs.founder == rhs.founder && lhs.changeSet.values == rhs.changeSet.values
    }
}
