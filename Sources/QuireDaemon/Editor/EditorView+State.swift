import ReplicatingTypes

// An editor view's whole state, for a document's snapshot and its recovery.
extension EditorView {
    private static let stateFormat: UInt8 = 1
    /// Pending daemon edits a stored view may hold; more is damage, not something to allocate.
    private static let maximumStoredPending = 1 << 20

    /// This view's whole state, for a snapshot (`DocumentFiles` keeps it as an opaque record);
    /// `init(decodingState:)` rebuilds it, so recovery continues replaying the log from there.
    func encodedState() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(Self.stateFormat)
        let idBytes = Array(id.utf8)
        writer.writeVarint(UInt64(idBytes.count))
        writer.write(contentsOf: idBytes)
        for number in [epoch, sentRevision, confirmedRevision, editorRevision] { writer.writeVarint(UInt64(max(0, number))) }
        let state = confirmed.encodedState()
        writer.writeVarint(UInt64(state.count))
        writer.write(contentsOf: state)
        writer.writeVarint(UInt64(pending.count))
        for edit in pending {
            writer.writeVarint(UInt64(max(0, edit.revision)))
            let operations = ReplicatingArrayCoding.encode(edit.operations)
            writer.writeVarint(UInt64(operations.count))
            writer.write(contentsOf: operations)
        }
        let operations = ReplicatingArrayCoding.encode(unsent)
        writer.writeVarint(UInt64(operations.count))
        writer.write(contentsOf: operations)
        return writer.bytes
    }

    /// A view as `encodedState()` kept it. Throws on damage, never traps.
    convenience init(decodingState bytes: [UInt8], uri: String, replica: ReplicaID) throws(BinaryDecodingError) {
        var reader = BinaryReader(bytes)
        guard try reader.readByte() == Self.stateFormat else { throw .invalid("unknown view state format") }
        let idLength = try reader.readCount(limit: 256)
        guard let id = String(validating: try reader.readBytes(idLength), as: UTF8.self) else { throw .invalid("a view ID is not UTF-8") }
        var numbers: [Int] = []
        for _ in 0..<4 { numbers.append(try reader.readCount(limit: Int(Int32.max))) }
        let stateLength = try reader.readCount(limit: reader.remaining)
        // A daemon edit the editor confirmed may hold an operation still waiting for the element
        // it follows (it came from a peer out of order): kept waiting, as in the live view.
        let confirmed = try ReplicatingText(decodingState: Array(try reader.readBytes(stateLength)), replica: replica,
                                            keepingWaitingOperations: true)
        let pendingCount = try reader.readCount(limit: min(Self.maximumStoredPending, reader.remaining))
        var pending: [(revision: Int, operations: [Operation])] = []
        for _ in 0..<pendingCount {
            let revision = try reader.readCount(limit: Int(Int32.max))
            let length = try reader.readCount(limit: reader.remaining)
            let operations = try ReplicatingArrayCoding.decode(Array(try reader.readBytes(length)), as: Unicode.Scalar.self)
            pending.append((revision, operations))
        }
        let length = try reader.readCount(limit: reader.remaining)
        let unsent = try ReplicatingArrayCoding.decode(Array(try reader.readBytes(length)), as: Unicode.Scalar.self)
        guard reader.isAtEnd else { throw .invalid("a view state has \(reader.remaining) bytes too many") }
        self.init(id: id, uri: uri, text: confirmed, replica: replica, encoding: .utf32)
        restore(epoch: numbers[0], sentRevision: numbers[1], confirmedRevision: numbers[2], editorRevision: numbers[3],
                pending: pending, unsent: unsent)
    }
}
