import QuireProject
import ReplicatingTypes

/// How a project's files store their text (`FileFormat`: CRLF line ends, a BOM, a final line
/// break), told to the project's peers beside the tree so the joiner writes each file with the
/// bytes the host has (the documents hold the text as editors show it, `\n` breaks and no BOM).
///
/// Wire form, a peer frame kind 12 payload (protocol/decisions/project-sharing.md): the tag
/// `0x46` (`F`, never a tree batch's version byte), a count, then per file its identity (two
/// varints) and one byte of flags (1 CRLF, 2 BOM, 4 final newline). Only files whose format is
/// not plain are sent. Decoding bounds the count before allocating and refuses unknown flags.
enum ProjectFormats {
    static let tag: UInt8 = 0x46

    static func encode(_ formats: [(file: FileID, format: FileFormat)]) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(tag)
        writer.writeVarint(UInt64(formats.count))
        for (file, format) in formats {
            writer.writeVarint(file.replica.rawValue)
            writer.writeVarint(file.serial)
            writer.write((format.crlf ? 1 : 0) | (format.bom ? 2 : 0) | (format.finalNewline ? 4 : 0))
        }
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(BinaryDecodingError) -> [(file: FileID, format: FileFormat)] {
        var reader = BinaryReader(bytes)
        guard try reader.readByte() == tag else { throw .invalid("not a file formats frame") }
        let count = try reader.readCount(limit: ProjectTree.maximumFiles)
        var formats: [(file: FileID, format: FileFormat)] = []
        formats.reserveCapacity(min(count, reader.remaining / 3))
        for _ in 0..<count {
            let file = FileID(replica: ReplicaID(try reader.readVarint()), serial: try reader.readVarint())
            let flags = try reader.readByte()
            guard flags & ~7 == 0 else { throw .invalid("a file format has unknown flags \(flags)") }
            formats.append((file, FileFormat(crlf: flags & 1 != 0, bom: flags & 2 != 0, finalNewline: flags & 4 != 0)))
        }
        guard reader.isAtEnd else { throw .invalid("\(reader.remaining) bytes after the last file format") }
        return formats
    }
}
