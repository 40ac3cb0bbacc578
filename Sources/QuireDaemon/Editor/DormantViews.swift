import ReplicatingTypes

/// Editor views that no session shows any more but whose editor may come back: the views of
/// editors whose connection ended without closing them, and every view recovered from the log
/// after a restart. A reopen that names one is resolved against exactly the elements that
/// editor saw (protocol/decisions/durable-views.md).
///
/// Guarantees: at most `maximumPerDocument` kept whole per document (the oldest are detached,
/// keeping their texts); detached views are bounded by memory, at most `detachedBytesLimit`
/// bytes of texts and `detachedCountLimit` views per document (the oldest go first, the newest
/// always stays, and their going is logged, so a restart does not bring them back), so editors
/// that open and leave cost bounded memory without pushing a returning editor out; a view is
/// taken at most once; the elements dormant views show stay stored (`referencedIDs`), so a
/// returning editor's text can always be placed.
final class DormantViews {
    static let maximumPerDocument = 8

    /// Bounds of the detached views of one document (`Daemon.Configuration`).
    var detachedBytesLimit = 8 << 20
    var detachedCountLimit = 4_096

    /// By document ID, oldest first.
    private var views: [UInt64: [EditorView]] = [:]
    /// Views whose elements went, by document ID, oldest first.
    private var detached: [UInt64: [DetachedView]] = [:]
    /// Bytes of texts the detached views of each document hold.
    private var detachedBytes: [UInt64: Int] = [:]

    /// Keeps `view` of document `documentID`; returns the views that had to go to make room.
    func keep(_ view: EditorView, of documentID: UInt64) -> [EditorView] {
        view.dropUnsent()
        let (kept, evicted) = Self.appendingNewest(view, to: views[documentID, default: []], id: \.id, limit: Self.maximumPerDocument)
        views[documentID] = kept
        return evicted
    }

    /// `list` with `item` last (in place of an older one of the same ID), and the oldest that
    /// pass `limit` views, or `byteLimit` bytes as `size` counts them (the newest always stays).
    private static func appendingNewest<View>(_ item: View, to list: [View], id: (View) -> String, limit: Int,
                                              byteLimit: Int = .max, size: (View) -> Int = { _ in 0 }) -> (kept: [View], evicted: [View]) {
        var list = list
        list.removeAll { id($0) == id(item) }
        list.append(item)
        var overflow = max(0, list.count - max(1, limit))
        var bytes = list.dropFirst(overflow).reduce(0) { $0 + size($1) }
        while overflow < list.count - 1, bytes > byteLimit {
            bytes -= size(list[overflow])
            overflow += 1
        }
        return (Array(list.dropFirst(overflow)), Array(list.prefix(overflow)))
    }

    /// Takes view `id` of document `documentID` out, if it is kept.
    func take(_ id: String, of documentID: UInt64) -> EditorView? {
        guard let index = views[documentID]?.firstIndex(where: { $0.id == id }) else { return nil }
        return views[documentID]?.remove(at: index)
    }

    /// Keeps `view`'s texts in place of `view` (its elements went); returns the detached views
    /// that had to go to make room.
    func keepDetached(_ view: DetachedView, of documentID: UInt64) -> [DetachedView] {
        views[documentID]?.removeAll { $0.id == view.id }
        let (kept, evicted) = Self.appendingNewest(view, to: detached[documentID, default: []], id: \.id, limit: detachedCountLimit,
                                                   byteLimit: detachedBytesLimit, size: \.byteCount)
        detached[documentID] = kept
        detachedBytes[documentID] = kept.reduce(0) { $0 + $1.byteCount }
        return evicted
    }

    /// Takes detached view `id` of document `documentID` out, if it is kept.
    func takeDetached(_ id: String, of documentID: UInt64) -> DetachedView? {
        guard let index = detached[documentID]?.firstIndex(where: { $0.id == id }),
              let view = detached[documentID]?.remove(at: index) else { return nil }
        detachedBytes[documentID, default: 0] -= view.byteCount
        return view
    }

    /// Bytes of texts the detached views of document `documentID` hold.
    func detachedByteCount(of documentID: UInt64) -> Int { detachedBytes[documentID] ?? 0 }

    /// Every detached view of document `documentID`, oldest first.
    func detachedViews(of documentID: UInt64) -> [DetachedView] { detached[documentID] ?? [] }

    /// Every kept view of document `documentID`, oldest first.
    func views(of documentID: UInt64) -> [EditorView] { views[documentID] ?? [] }

    /// Forgets the views of document `documentID` that `shouldGo` picks (every view: its text
    /// was replaced whole); returns them.
    func removeAll(of documentID: UInt64, where shouldGo: (EditorView) -> Bool = { _ in true }) -> [EditorView] {
        let gone = views[documentID, default: []].filter(shouldGo)
        views[documentID]?.removeAll(where: shouldGo)
        if views[documentID]?.isEmpty == true { views[documentID] = nil }
        return gone
    }

    /// Elements the kept views of `documentID` show.
    func referencedIDs(of documentID: UInt64) -> [ElementIDRange] {
        views(of: documentID).flatMap(\.referencedIDs)
    }
}

/// Rebuilds one document's editor views from its snapshot and log (`ViewReplay`), by the same
/// bookkeeping the live views did.
final class ViewRecovery: ViewReplay {
    private let uri: String
    private let replica: ReplicaID
    /// Views in the order they were opened.
    private(set) var views: [EditorView] = []
    /// Views whose elements went, in the order they did.
    private(set) var detached: [DetachedView] = []
    /// Views whose snapshot state could not be read.
    private(set) var damaged = 0
    /// Why the first of them could not be read.
    private(set) var damage: String?

    init(uri: String, replica: ReplicaID) {
        self.uri = uri
        self.replica = replica
    }

    func restore(_ states: [[UInt8]], document: ReplicatingText) {
        for state in states {
            do {
                if state.first == DetachedView.stateFormat {
                    detached.append(try DetachedView(decodingState: state))
                } else {
                    views.append(try EditorView(decodingState: state, uri: uri, replica: replica))
                }
            } catch {
                damaged += 1
                if damage == nil { damage = error.description }
            }
        }
    }

    func replayed(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], document: ReplicatingText) {
        for view in views { view.enqueue(operations) }
    }

    func replayed(_ event: ViewEvent, operations: [ReplicatingArrayOperation<Unicode.Scalar>], document: ReplicatingText) {
        let index = views.firstIndex { $0.id == event.view }
        switch event {
        case .opened(let id):
            if let index { views.remove(at: index) }
            views.append(EditorView(id: id, uri: uri, text: document, replica: replica, encoding: .utf32))
        case .edited(_, let epoch, let revision):
            for (i, view) in views.enumerated() where i != index { view.enqueue(operations) }
            if let index { views[index].replayEditorEdit(epoch: epoch, revision: revision, operations: operations) }
        case .sent:
            if let index { views[index].replayDaemonEdit() }
        case .resynced:
            if let index { views[index].resync(to: document) }
        case .closed:
            if let index { views.remove(at: index) }
            detached.removeAll { $0.id == event.view }
        case .detached:
            if let index {
                detached.removeAll { $0.id == event.view }
                detached.append(DetachedView(detaching: views.remove(at: index)))
            }
        }
    }
}
