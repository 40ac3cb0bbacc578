/// The documents whose view, in one editor session, holds operations its editor was not sent
/// yet: what the end of a read sends daemon edits for, so that its cost follows the documents
/// that changed, not every document the session has open.
///
/// Guarantees: a view that is given this set (`EditorView.unsentViews`) is named in it whenever
/// its operations not yet sent go from none to some (`EditorView`'s `unsent` notes it on every
/// change); `take()` empties it. A name may stay after its view went or was sent everything
/// (the sender checks each view again), never the other way round.
final class UnsentViews {
    private var uris: Set<String> = []

    /// Notes that the view of `uri` has operations to send.
    /// - Complexity: O(1) (amortized; the hash of `uri`).
    func insert(_ uri: String) { uris.insert(uri) }

    var isEmpty: Bool { uris.isEmpty }
    var count: Int { uris.count }

    /// The names noted since the last call, in order; empties the set.
    /// - Complexity: O(k log k) for the k noted.
    func take() -> [String] {
        guard !uris.isEmpty else { return [] }
        let taken = uris.sorted()
        uris.removeAll(keepingCapacity: true)
        return taken
    }
}
