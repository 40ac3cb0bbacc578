import ReplicatingTypes

/// The compact binary form of tree operations, for peers and logs (the library's LEB128 varints):
///
///     batch     := version(1) count(varint) operation*
///     operation := file.replica(varint) file.serial(varint) counter(varint) stamp.replica(varint)
///                  kind(1: 0 deleted, 1 placed) [length(varint) path(UTF-8)]
///
/// Decoding checks every bound before allocating: at most `maximumBatch` operations, paths of at
/// most `ProjectPath.maximumUTF8Bytes` that pass `ProjectPath`'s rules; anything else is a
/// `BinaryDecodingError` naming what is wrong, and nothing is applied.
extension ProjectTree.Operation {
    public static let binaryVersion: UInt8 = 1
    /// A batch holds at most this many operations (a whole project's state fits).
    public static let maximumBatch = ProjectTree.maximumFiles

    /// `operations` as one batch.
    public static func encode(_ operations: [ProjectTree.Operation]) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(binaryVersion)
        writer.writeVarint(UInt64(operations.count))
        for operation in operations { operation.encode(into: &writer) }
        return writer.bytes
    }

    /// The operations of a batch, or why it is refused.
    public static func decode(_ bytes: [UInt8]) throws(BinaryDecodingError) -> [ProjectTree.Operation] {
        var reader = BinaryReader(bytes)
        let version = try reader.readByte()
        guard version == binaryVersion else { throw .unsupportedVersion(version) }
        let count = try reader.readCount(limit: maximumBatch)
        var operations: [ProjectTree.Operation] = []
        operations.reserveCapacity(min(count, reader.remaining / 5))
        for _ in 0..<count { operations.append(try decode(from: &reader)) }
        guard reader.isAtEnd else { throw .invalid("\(reader.remaining) bytes after the last tree operation") }
        return operations
    }

    func encode(into writer: inout BinaryWriter) {
        writer.writeVarint(file.replica.rawValue)
        writer.writeVarint(file.serial)
        writer.writeVarint(timestamp.counter)
        writer.writeVarint(timestamp.replica.rawValue)
        if let path {
            writer.write(1)
            let bytes = Array(path.string.utf8)
            writer.writeVarint(UInt64(bytes.count))
            writer.write(contentsOf: bytes)
        } else {
            writer.write(0)
        }
    }

    static func decode(from reader: inout BinaryReader) throws(BinaryDecodingError) -> ProjectTree.Operation {
        let file = FileID(replica: ReplicaID(try reader.readVarint()), serial: try reader.readVarint())
        let timestamp = LamportTimestamp(counter: try reader.readVarint(), replica: ReplicaID(try reader.readVarint()))
        switch try reader.readByte() {
        case 0:
            return ProjectTree.Operation(file: file, path: nil, timestamp: timestamp)
        case 1:
            let length = try reader.readCount(limit: ProjectPath.maximumUTF8Bytes)
            guard let text = String(validating: try reader.readBytes(length), as: UTF8.self) else {
                throw .invalid("a tree operation's path is not UTF-8")
            }
            do {
                return ProjectTree.Operation(file: file, path: try ProjectPath(text), timestamp: timestamp)
            } catch {
                throw .invalid("a tree operation's path is refused: \(error.description)")
            }
        case let kind:
            throw .invalid("a tree operation's kind is \(kind); 0 (deleted) or 1 (placed) expected")
        }
    }
}
