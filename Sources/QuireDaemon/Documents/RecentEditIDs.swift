/// The IDs of the latest editor edits applied to one document (`document/edit`'s `editId`),
/// kept durably with the edits, so that an editor reopening after the daemon died can tell which
/// of the edits it had in flight were applied (protocol/README.md, *Reopen*).
///
/// Guarantees: holds the last `capacity` IDs inserted, oldest first in `all`; `contains` and
/// `insert` are O(1) amortized. Editors have only a handful of edits in flight when a daemon
/// dies, so a window of `capacity` edits per document is plenty.
struct RecentEditIDs: Equatable {
    static let capacity = 1024

    private var order: [String] = []
    private var start = 0
    private var members: Set<String> = []

    init(_ ids: some Sequence<String> = []) {
        for id in ids { insert(id) }
    }

    func contains(_ id: String) -> Bool { members.contains(id) }

    /// Oldest first.
    var all: ArraySlice<String> { order[start...] }

    mutating func insert(_ id: String) {
        guard members.insert(id).inserted else { return }
        order.append(id)
        if order.count - start > Self.capacity {
            members.remove(order[start])
            start += 1
            if start >= Self.capacity {
                order.removeFirst(start)
                start = 0
            }
        }
    }
}
