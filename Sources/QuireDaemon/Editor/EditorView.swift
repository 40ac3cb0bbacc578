import QuireProtocol
import ReplicatingTypes

/// One editor's view of one shared document, and the revision bookkeeping that lets editor and
/// daemon edit at the same time without operational transforms (protocol/decisions/revisions.md).
///
/// Model: `confirmed` is exactly the text the editor is known to show: every daemon edit it has
/// confirmed (by basing an edit of its own on it) plus its own edits, as CRDT elements with
/// their IDs. `sent` is `confirmed` plus the daemon edits sent but not yet confirmed. Operations
/// the editor has not been sent wait in `unsent`.
///
/// Invariants:
/// 1. `confirmedRevision <= sentRevision`; `pending` holds the daemon edits numbered
///    `confirmedRevision + 1 ... sentRevision`, in order.
/// 2. `sent` equals `confirmed` with every pending edit's operations applied.
/// 3. Every operation of the document is in `confirmed`, in a pending edit, or in `unsent`.
///
/// An editor edit based on daemon revision `d` confirms pending edits up to `d`; the editor
/// drops the later ones (they were made before it sent its edit), so their operations go back
/// to `unsent` and are sent again, positioned in the text the editor really has.
final class EditorView {
    typealias Operation = ReplicatingArrayOperation<Unicode.Scalar>

    /// Names this view durably: the editor gets it from `document/open` and sends it back when it
    /// reopens after the daemon went away, so its text is resolved against exactly this view.
    let id: String
    let uri: String
    /// The session's position encoding; a view recovered from the log takes its new session's.
    var encoding: PositionEncoding
    private(set) var epoch = 0
    private(set) var confirmed: ReplicatingText
    /// A separate copy while it differs from `confirmed`, kept afterwards so that steady editing
    /// never copies the text; dropped (and rebuilt) only when the editor drops daemon edits.
    private var sentCopy: ReplicatingText?
    private(set) var pending: [(revision: Int, operations: [Operation])] = []
    /// Operations of the document this view's editor was not sent yet. Whenever it holds some,
    /// the view is named in its session's `UnsentViews` (`report(unsentTo:as:)`).
    private(set) var unsent: [Operation] = [] {
        didSet { if !unsent.isEmpty { unsentViews?.insert(unsentKey) } }
    }
    /// The set of the session that shows this view, and the name it shows it by.
    private weak var unsentViews: UnsentViews?
    private var unsentKey = ""
    private(set) var sentRevision = 0
    private(set) var confirmedRevision = 0
    private(set) var editorRevision = 0
    /// Why an editor edit of this epoch was refused: every later edit of the epoch was based on
    /// it, so they are refused too until a resync starts a new epoch.
    private(set) var refusal: String?
    /// Whether the editor was last told it may not change the document (open, `document/readOnly`).
    var toldReadOnly = false

    init(id: String, uri: String, text: ReplicatingText, replica: ReplicaID, encoding: PositionEncoding) {
        self.id = id
        self.uri = uri
        self.encoding = encoding
        confirmed = text
        confirmed.replica = replica
    }

    /// The replica this view's editor edits as (lent by `LocalReplicas`; 0 in a view recovered
    /// from the log until a session takes it).
    var replica: ReplicaID { confirmed.replica }

    /// What has been sent to the editor: its text once it applies every pending edit.
    var sent: ReplicatingText { sentCopy ?? confirmed }

    var hasUnsentOperations: Bool { !unsent.isEmpty }

    /// From now on, whenever this view holds operations its editor was not sent, `set` names it
    /// as `key` (at once if it holds some now); nil: a view no session shows.
    func report(unsentTo set: UnsentViews?, as key: String) {
        unsentViews = set
        unsentKey = key
        if !unsent.isEmpty { set?.insert(key) }
    }

    /// Elements this view's copies show, which its editor's next edits may be anchored to: the
    /// document must keep them even where it has removed them.
    /// The editor may be at any revision from the confirmed one to the last sent
    /// (`text(atRevision:)`), so what a pending edit inserted counts too, even where a later
    /// pending edit removed it: neither copy shows it, but the editor may.
    var referencedIDs: [ElementIDRange] {
        var ids = confirmed.scalars.visibleIDs + (sentCopy?.scalars.visibleIDs ?? [])
        for edit in pending {
            for case .insert(let insertion) in edit.operations {
                ids.append(ElementIDRange(start: insertion.id, count: UInt64(insertion.count)))
            }
        }
        return ids
    }

    /// Operations that reached the document from elsewhere; sent at the next `makeDaemonEdit`.
    func enqueue(_ operations: [Operation]) {
        unsent.append(contentsOf: operations)
    }

    /// Applies an editor edit based on daemon revision `revision` of `epoch`; returns the
    /// operations for the document. Throws, changing nothing, when the revision or a change does
    /// not fit, and from then on refuses the epoch's later edits (`ResponseError.resyncNeeded`).
    /// `cursor` is where the editor's cursor is after the last change. `room`: what the document
    /// may still take; an edit that would insert more is refused (`documentTooLarge`) like a
    /// change that does not fit.
    /// - Complexity: O(changed lines + k log n); O(n) when daemon edits were dropped, the edit
    /// holds several changes, or its new text could pass `room` (each resolved on a copy first).
    func applyEditorEdit(epoch: Int, revision: Int, changes: [WireChange], cursor: WirePosition? = nil,
                         room: ElementRoom? = nil) throws(ResponseError) -> [Operation] {
        guard epoch == self.epoch else { throw .staleEpoch(got: epoch, current: self.epoch) }
        if let refusal { throw .resyncNeeded(epoch: epoch, reason: refusal) }
        do {
            return try resolveEditorEdit(revision: revision, changes: changes,
                                         cursor: cursor.map { TextPosition(line: $0.line, character: $0.character) }, room: room)
        } catch {
            refusal = error.message
            throw error
        }
    }

    /// An edit of `epoch` was refused before it reached this view (a read-only document): the
    /// epoch's later edits are refused until a resync. Whether it is the epoch's first refusal.
    @discardableResult
    func refuseRest(of epoch: Int, reason: String) -> Bool {
        guard epoch == self.epoch, refusal == nil else { return false }
        refusal = reason
        return true
    }

    private func resolveEditorEdit(revision: Int, changes: [WireChange], cursor: TextPosition?, room: ElementRoom?) throws(ResponseError) -> [Operation] {
        guard revision <= sentRevision else { throw .revisionFromFuture(got: revision, latest: sentRevision) }
        guard revision >= confirmedRevision else {
            throw .invalidParams("params.revision: \(revision) is older than revision \(confirmedRevision), which this editor already confirmed")
        }
        confirm(upTo: revision)
        // Resolve the changes against exactly that text. A single change is validated before it
        // modifies anything; several are tried on a copy so a bad one leaves no trace, as is one
        // whose new text could pass the room the document has (what it inserts is known once
        // it is resolved; its new text bounds that, so the copy is rarely needed).
        var operations: [Operation] = []
        let mayPassRoom = room.map { ElementRoom.mostInserted(by: changes) > $0.remaining } ?? false
        if changes.count == 1 && !mayPassRoom {
            operations = try ChangeResolver.apply(changes[0], to: &confirmed, encoding: encoding, cursor: cursor)
        } else if !changes.isEmpty {
            var scratch = confirmed
            for (index, change) in changes.enumerated() {
                let last = index == changes.count - 1
                operations.append(contentsOf: try ChangeResolver.apply(change, to: &scratch, encoding: encoding, cursor: last ? cursor : nil))
            }
            try room?.check(adding: ElementRoom.newElements(of: operations))
            confirmed = scratch
        }
        for op in operations { sentCopy?.integrate(op) }
        editorRevision += 1
        return operations
    }

    /// The editor showed confirmed plus the pending edits up to `revision`: confirms them. Later
    /// pending edits were based on an older editor revision, so the editor drops them: their
    /// operations go back to `unsent`. This bookkeeping holds whether or not the changes fit.
    private func confirm(upTo revision: Int) {
        let confirming = pending.prefix { $0.revision <= revision }.count
        for edit in pending[..<confirming] { for op in edit.operations { confirmed.integrate(op) } }
        if confirming < pending.count {
            unsent = pending[confirming...].flatMap(\.operations) + unsent
            sentCopy = nil
            sentRevision = revision
        }
        pending = []
        confirmedRevision = revision
    }

    /// Replays an editor edit the log recorded (recovery): the same bookkeeping as
    /// `applyEditorEdit`, with the operations it resolved to instead of the changes. A record
    /// that does not fit this view (it cannot, unless the log was damaged) is ignored.
    func replayEditorEdit(epoch: Int, revision: Int, operations: [Operation]) {
        guard epoch == self.epoch, revision <= sentRevision, revision >= confirmedRevision else { return }
        confirm(upTo: revision)
        for op in operations {
            confirmed.integrate(op)
            sentCopy?.integrate(op)
        }
        editorRevision += 1
    }

    /// Replays the sending of a daemon edit (recovery): what `makeDaemonEdit` did to the view.
    func replayDaemonEdit() {
        _ = makeDaemonEdit(hashLimit: -1)
    }

    /// Forgets the operations the editor was not sent: a view no session shows needs only what
    /// its editor may show (`text(atRevision:)`); it is brought up to date by a resync.
    func dropUnsent() {
        unsent = []
    }

    /// Sends what the editor has not seen: applies `unsent` to `sent` and returns the editor's
    /// changes, positioned in its text and applied in order; nil when nothing visible changed.
    /// - Complexity: O(k log n) for k operations (plus O(n) to hash when `hashLimit` allows).
    func makeDaemonEdit(hashLimit: Int) -> EditDocumentMessage? {
        guard !unsent.isEmpty else { return nil }
        if sentCopy == nil { sentCopy = confirmed }
        let operations = unsent
        unsent = []
        var changes: [TextChange] = []
        for op in operations {
            changes.append(contentsOf: sentCopy!.apply(op, reportingIn: encoding))
        }
        if changes.isEmpty {
            // Nothing the editor would see. With edits pending, the operations ride along with
            // the last one (they may remove what that edit removed, which `confirmed` still shows).
            if pending.isEmpty {
                for op in operations { confirmed.integrate(op) }
            } else {
                pending[pending.count - 1].operations.append(contentsOf: operations)
            }
            return nil
        }
        sentRevision += 1
        pending.append((sentRevision, operations))
        let text = sent
        return EditDocumentMessage(
            uri: uri, epoch: epoch, revision: editorRevision, changes: changes.map(Self.wireChange),
            hash: text.count <= hashLimit ? TextHash.sha256Hex(text) : nil)
    }

    /// Starts a new epoch in which the editor shows exactly `document`.
    func resync(to document: ReplicatingText) {
        let replica = confirmed.replica
        confirmed = document
        confirmed.replica = replica
        sentCopy = nil
        pending = []
        unsent = []
        refusal = nil
        epoch += 1
        sentRevision = 0
        confirmedRevision = 0
        editorRevision = 0
    }

    /// The text the editor shows after applying daemon revision `revision`, when known: any
    /// revision from the confirmed one to the last sent.
    /// - Complexity: O(1) for the confirmed and the last sent revision; O(n) in between.
    func text(atRevision revision: Int) -> ReplicatingText? {
        if revision == sentRevision { return sent }
        if revision == confirmedRevision { return confirmed }
        guard revision > confirmedRevision, revision < sentRevision else { return nil }
        var text = confirmed
        for edit in pending where edit.revision <= revision {
            for op in edit.operations { text.integrate(op) }
        }
        return text
    }

    /// Takes the bookkeeping a stored view kept (`init(decodingState:uri:replica:)`): its
    /// epoch, revisions, pending daemon edits and unsent operations, on the confirmed text it was
    /// made with.
    func restore(epoch: Int, sentRevision: Int, confirmedRevision: Int, editorRevision: Int,
                 pending: [(revision: Int, operations: [Operation])], unsent: [Operation]) {
        self.epoch = epoch
        self.sentRevision = sentRevision
        self.confirmedRevision = confirmedRevision
        self.editorRevision = editorRevision
        self.pending = pending
        self.unsent = unsent
        if !pending.isEmpty {
            var copy = confirmed
            for edit in pending { for op in edit.operations { copy.integrate(op) } }
            sentCopy = copy
        } else {
            sentCopy = nil
        }
    }

    /// Edits of this view's editor from now on are made as `replica` (a recovered view taken
    /// over by a new session).
    func takeReplica(_ replica: ReplicaID) {
        confirmed.replica = replica
        sentCopy?.replica = replica
    }

    static func wireChange(_ change: TextChange) -> WireChange {
        .range(WireRange(start: WirePosition(line: change.range.start.line, character: change.range.start.character),
                         end: WirePosition(line: change.range.end.line, character: change.range.end.character)),
               text: change.text)
    }
}
