import JSON
import ReplicatingTypes

/// What used to replace a whole file of a document and is now a record of its log: who holds it
/// (`sharing`), a whole state a peer sent (`state`), and its file binding (`DocumentFiles+Binding`).
/// Such a record is appended like an edit: into the document's pack while it has no files of
/// its own (a project shared or joined keeps its thousands of documents in one file, synced once
/// per commit, and claims none), else to its current segment, synced with the commit's other
/// appends. No inode is made and no file renamed on the reply path.
///
/// Recovery takes the last of each kind in the segments it replays, over `document.json` and
/// `file.json`; a state record replaces the text replayed so far. A snapshot first writes the
/// sharing and binding recorded since the last one into `document.json` and `file.json`
/// (`foldRecords`): the segments before it are no longer replayed.
extension DocumentFiles {
    /// Records that peers hold this document, which, and where its copies stand (its tombstones
    /// are no longer this daemon's alone to drop): `[7][sharing as JSON]`.
    func recordSharing(_ sharing: DocumentSharing) throws {
        try appendRecord(LogRecords.record([RecordKind.sharing.rawValue] + JSONSerializer(sortedKeys: true).serialize(sharing.json)))
        unfoldedSharing = sharing
    }

    /// Records `text`, a whole state a peer sent, as the document from here on:
    /// `[2][state]`, the snapshot's encoding. No log of operations can rebuild it; until a
    /// snapshot holds it, it is only in this record (protected by its checksum, as every edit).
    func adopt(_ text: ReplicatingText) throws {
        try appendRecord(LogRecords.record([RecordKind.state.rawValue] + text.encodedState()))
    }

    /// Writes the sharing and binding recorded in the log since the last snapshot into
    /// `document.json` and `file.json` (each atomically): before a snapshot, whose replay skips
    /// the segments that hold their records.
    func foldRecords() throws {
        if let sharing = unfoldedSharing {
            try Self.writeMetadata(in: directory, uri: uri, id: id, sharing: sharing)
            unfoldedSharing = nil
        }
        if let binding = unfoldedBinding {
            try writeBindingFiles(binding)
            unfoldedBinding = nil
        }
    }

    /// A sharing record's sharing.
    static func decodeSharingRecord(_ payload: ArraySlice<UInt8>) throws -> DocumentSharing {
        DocumentSharing(json: try JSONParser().parse(Array(payload.dropFirst())))
    }

    /// A state record's state, decoded as a snapshot's (written by this daemon: operations still
    /// waiting for an element on its way are kept waiting).
    static func decodeStateRecord(_ payload: ArraySlice<UInt8>, replica: ReplicaID) throws -> ReplicatingText {
        try ReplicatingText(decodingState: Array(payload.dropFirst()), replica: replica, maximumElements: .max,
                            keepingWaitingOperations: true)
    }
}
