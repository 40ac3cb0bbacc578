import Crypto

/// The framing of everything Quire writes to disk: a file starts with an 8-byte magic naming its
/// kind and format, then records of `[payload length: UInt32 LE][checksum: 8 bytes][payload]`,
/// where the checksum is the first 8 bytes of the payload's SHA-256.
///
/// Guarantees: `scan` returns the records up to the first one that is torn (shorter than its
/// length says) or damaged (checksum mismatch), and where the good part ends, so a reader can
/// keep everything before the damage and say what it dropped.
enum LogRecords {
    static let headerBytes = 12
    static let magicBytes = 8
    /// Larger claimed lengths are treated as damage, not allocated.
    static let maximumPayloadBytes = 1 << 30

    /// A file's kind: the magic it starts with.
    enum Kind: String {
        case log = "QUIRLOG1"
        case snapshot = "QUIRSNP1"
        case pack = "QUIRPAK1"
        var magic: [UInt8] { Array(rawValue.utf8) }
    }

    static func record(_ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerBytes + payload.count)
        let length = UInt32(payload.count)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt32(shift))) }
        bytes.append(contentsOf: checksum(payload[...]))
        bytes.append(contentsOf: payload)
        return bytes
    }

    static func checksum(_ payload: ArraySlice<UInt8>) -> [UInt8] {
        Array(SHA256.hash(data: payload).prefix(8))
    }

    /// What `scan` found: the intact records, the offset just past the last of them, and a
    /// description of the damage after it (nil when the file ends cleanly).
    struct Scan {
        var payloads: [ArraySlice<UInt8>] = []
        var validEnd: Int
        var damage: String?
    }

    /// Reads a file of `kind`. A missing or wrong magic is damage at offset 0.
    static func scan(_ bytes: [UInt8], kind: Kind) -> Scan {
        guard bytes.count >= magicBytes else {
            return Scan(validEnd: 0, damage: bytes.isEmpty ? nil : "the file header is torn (\(bytes.count) bytes)")
        }
        guard Array(bytes[0..<magicBytes]) == kind.magic else {
            return Scan(validEnd: 0, damage: "the file does not start with \(kind.rawValue)")
        }
        var scan = Scan(validEnd: magicBytes)
        var offset = magicBytes
        while offset < bytes.count {
            guard bytes.count - offset >= headerBytes else {
                scan.damage = "a record header at byte \(offset) is torn"
                break
            }
            var length = 0
            for i in 0..<4 { length |= Int(bytes[offset + i]) << (8 * i) }
            let start = offset + headerBytes
            guard length <= maximumPayloadBytes, bytes.count - start >= length else {
                scan.damage = "the record at byte \(offset) claims \(length) bytes, \(bytes.count - start) follow"
                break
            }
            let payload = bytes[start..<(start + length)]
            guard checksum(payload) == Array(bytes[(offset + 4)..<start]) else {
                scan.damage = "the record at byte \(offset) fails its checksum"
                break
            }
            scan.payloads.append(payload)
            offset = start + length
            scan.validEnd = offset
        }
        return scan
    }
}
