import ReplicatingTypes

/// What is left of a kept view once its elements can no longer be kept: the text its editor
/// showed at each revision it can be at, so the editor's reopen merges what it typed meanwhile
/// as text against exactly what it saw, with no base of the client's own
/// (protocol/decisions/durable-views.md, *When a view's elements go*).
///
/// A view is detached when a stability round drops tombstones it shows, or when the document's
/// history is replaced (a rebase, a whole state taken in): placing the editor's edits by identity
/// would then anchor them to elements no copy knows.
///
/// Guarantees: at most `maximumRevisions` texts (the confirmed and the last sent revision
/// always); decoding never traps on damaged bytes.
struct DetachedView: Equatable {
    static let stateFormat: UInt8 = 2
    /// Revisions kept beyond which only the confirmed and the last sent one are.
    static let maximumRevisions = 8

    let id: String
    let epoch: Int
    /// Daemon revision -> the editor's text at it.
    let texts: [Int: String]

    init(id: String, epoch: Int, texts: [Int: String]) {
        self.id = id
        self.epoch = epoch
        self.texts = texts
    }

    /// `view` as its texts, from its confirmed revision to its last sent one.
    /// - Complexity: O(n × revisions kept)
    init(detaching view: EditorView) {
        var revisions = Array(view.confirmedRevision...max(view.confirmedRevision, view.sentRevision))
        if revisions.count > Self.maximumRevisions { revisions = [view.confirmedRevision, view.sentRevision] }
        var texts: [Int: String] = [:]
        for revision in revisions { texts[revision] = view.text(atRevision: revision)?.string }
        self.init(id: view.id, epoch: view.epoch, texts: texts)
    }

    /// The bytes its texts take (what `DormantViews` bounds).
    var byteCount: Int { texts.values.reduce(0) { $0 + $1.utf8.count } }

    /// What its editor showed at daemon revision `revision` of `epoch`, when known.
    func text(epoch: Int?, revision: Int?) -> String? {
        guard let epoch, let revision, epoch == self.epoch else { return nil }
        return texts[revision]
    }

    /// Its state for a snapshot, beside the views' (`EditorView.encodedState`).
    func encodedState() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(Self.stateFormat)
        Self.write(Array(id.utf8), into: &writer)
        writer.writeVarint(UInt64(max(0, epoch)))
        writer.writeVarint(UInt64(texts.count))
        for (revision, text) in texts.sorted(by: { $0.key < $1.key }) {
            writer.writeVarint(UInt64(max(0, revision)))
            Self.write(Array(text.utf8), into: &writer)
        }
        return writer.bytes
    }

    /// A detached view as `encodedState()` kept it. Throws on damage, never traps.
    init(decodingState bytes: [UInt8]) throws(BinaryDecodingError) {
        var reader = BinaryReader(bytes)
        guard try reader.readByte() == Self.stateFormat else { throw .invalid("not a detached view") }
        guard let id = String(validating: try reader.readBytes(try reader.readCount(limit: ViewEvent.maximumViewIDBytes)), as: UTF8.self) else {
            throw .invalid("a view ID is not UTF-8")
        }
        let epoch = try reader.readCount(limit: Int(Int32.max))
        let count = try reader.readCount(limit: Self.maximumRevisions)
        var texts: [Int: String] = [:]
        for _ in 0..<count {
            let revision = try reader.readCount(limit: Int(Int32.max))
            guard let text = String(validating: try reader.readBytes(try reader.readCount(limit: reader.remaining)), as: UTF8.self) else {
                throw .invalid("a detached view's text is not UTF-8")
            }
            texts[revision] = text
        }
        guard reader.isAtEnd else { throw .invalid("a detached view has \(reader.remaining) bytes too many") }
        self.init(id: id, epoch: epoch, texts: texts)
    }

    private static func write(_ bytes: [UInt8], into writer: inout BinaryWriter) {
        writer.writeVarint(UInt64(bytes.count))
        writer.write(contentsOf: bytes)
    }
}
