import ReplicatingTypes

/// What happened to one editor's view of a document, as the document's log records it, so that
/// recovery rebuilds every view an editor still had open when the daemon stopped, and a reopen
/// after a crash is resolved against exactly the elements that editor saw
/// (protocol/decisions/durable-views.md).
///
/// Guarantees: a view event is logged in the same segment, in the same order, as the operations
/// around it, so replaying the log in order gives every view the state it had at that point;
/// decoding never traps on damaged bytes.
enum ViewEvent: Equatable {
    /// A view opened, showing the document as it stands at this point of the log.
    case opened(view: String)
    /// The view's editor made an edit based on daemon revision `revision` of `epoch`; its
    /// operations are in the same record (possibly none).
    case edited(view: String, epoch: Int, revision: Int)
    /// A daemon edit was sent: the view took every operation it had not been sent.
    case sent(view: String)
    /// The view started a new epoch showing the document as it stands here.
    case resynced(view: String)
    /// The editor closed the document: the view is gone.
    case closed(view: String)
    /// The view's elements went (a stability round dropped some it shows, or the document's
    /// history was replaced): only its texts are kept (`DetachedView`).
    case detached(view: String)

    var view: String {
        switch self {
        case .opened(let view), .edited(let view, _, _), .sent(let view), .resynced(let view), .closed(let view), .detached(let view):
            return view
        }
    }

    private var tag: UInt8 {
        switch self {
        case .opened: return 1
        case .edited: return 2
        case .sent: return 3
        case .resynced: return 4
        case .closed: return 5
        case .detached: return 6
        }
    }

    /// View IDs are short; a longer one is damage.
    static let maximumViewIDBytes = 64

    /// The record payload after its kind byte: the event, then (for an edit) the edit ID and the
    /// operations.
    func encoded(editID: String? = nil, operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(tag)
        Self.writeString(view, into: &writer)
        if case .edited(_, let epoch, let revision) = self {
            writer.writeVarint(UInt64(max(0, epoch)))
            writer.writeVarint(UInt64(max(0, revision)))
            Self.writeString(editID ?? "", into: &writer)
            writer.write(contentsOf: ReplicatingArrayCoding.encode(operations))
        }
        return writer.bytes
    }

    /// Decodes what `encoded` wrote.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(BinaryDecodingError)
        -> (event: ViewEvent, editID: String?, operations: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        var reader = BinaryReader(Array(bytes))
        let tag = try reader.readByte()
        let view = try readString(from: &reader, limit: maximumViewIDBytes)
        switch tag {
        case 1: return (.opened(view: view), nil, [])
        case 3: return (.sent(view: view), nil, [])
        case 4: return (.resynced(view: view), nil, [])
        case 5: return (.closed(view: view), nil, [])
        case 6: return (.detached(view: view), nil, [])
        case 2:
            let epoch = try reader.readCount(limit: Int(Int32.max))
            let revision = try reader.readCount(limit: Int(Int32.max))
            let editID = try readString(from: &reader, limit: Int(UInt8.max))
            let operations = try ReplicatingArrayCoding.decode(Array(try reader.readBytes(reader.remaining)), as: Unicode.Scalar.self)
            return (.edited(view: view, epoch: epoch, revision: revision), editID.isEmpty ? nil : editID, operations)
        default:
            throw .invalid("unknown view event \(tag)")
        }
    }

    private static func writeString(_ string: String, into writer: inout BinaryWriter) {
        let bytes = Array(string.utf8)
        writer.writeVarint(UInt64(bytes.count))
        writer.write(contentsOf: bytes)
    }

    private static func readString(from reader: inout BinaryReader, limit: Int) throws(BinaryDecodingError) -> String {
        let length = try reader.readCount(limit: limit)
        guard let string = String(validating: try reader.readBytes(length), as: UTF8.self) else { throw .invalid("a name is not UTF-8") }
        return string
    }
}

/// Rebuilds the editor views of one document while recovery replays its snapshot and log. The
/// storage layer only reads and orders the records; what a view is belongs to the editor layer,
/// which implements this.
protocol ViewReplay: AnyObject {
    /// The views a snapshot kept (opaque states from `DocumentStore.snapshotDueDocuments`), with
    /// the document as that snapshot holds it.
    func restore(_ states: [[UInt8]], document: ReplicatingText)
    /// Operations that reached the document from elsewhere than a view's editor (peers, undo,
    /// files, merges): every view is owed them. `document` already holds them.
    func replayed(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], document: ReplicatingText)
    /// A view event; for `.edited`, the operations the edit made, which `document` already holds.
    func replayed(_ event: ViewEvent, operations: [ReplicatingArrayOperation<Unicode.Scalar>], document: ReplicatingText)
}
