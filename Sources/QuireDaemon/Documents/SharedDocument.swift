import QuireProtocol
import ReplicatingTypes

/// One document the daemon holds: the authoritative replicated text that every editor session
/// and peer contributes to, and the selections of the sessions that have it open.
///
/// Guarantees: `text` holds every operation any session or peer contributed, each applied
/// once; the document never makes edits of its own, so every element is attributable to the
/// session or peer replica that typed it.
final class SharedDocument {
    /// Where a selection end sits: before everything, or right after an element (which may
    /// since have been removed, in which case it sits where its tombstone is).
    enum Anchor: Equatable {
        case start
        case after(ElementID)
    }

    struct RemoteSelection {
        var user: WireUser
        var selections: [(anchor: Anchor, head: Anchor)]
    }

    let uri: String
    private(set) var text: ReplicatingText
    /// Selections by session id.
    var selections: [Int: RemoteSelection] = [:]

    init(uri: String, text: ReplicatingText) {
        self.uri = uri
        self.text = text
    }

    /// Applies operations a session or peer made. - Complexity: O(k log n)
    func apply(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        for op in operations { text.apply(op) }
    }

    /// The anchor of scalar offset `offset` in `view`.
    static func anchor(ofOffset offset: Int, in view: ReplicatingText) -> Anchor {
        offset == 0 ? .start : .after(view.scalars.id(at: offset - 1))
    }

    /// The scalar offset of `anchor` in `view`, or nil when `view` does not have its element yet.
    static func offset(of anchor: Anchor, in view: ReplicatingText) -> Int? {
        switch anchor {
        case .start: return 0
        case .after(let id): return view.scalars.index(after: id)
        }
    }
}
