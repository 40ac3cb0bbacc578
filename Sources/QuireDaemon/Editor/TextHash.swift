import Crypto
import ReplicatingTypes

/// The hash editors compare their text against: SHA-256 of the whole text's UTF-8 bytes, as
/// lowercase hex (what Vim's `sha256()` and Emacs's `secure-hash` print).
enum TextHash {
    /// The hash of a replicated text, encoded straight from its scalars (no `String` built).
    /// - Complexity: O(n)
    static func sha256Hex(_ text: ReplicatingText) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count + text.count / 4)
        for scalar in text.scalars.elements {
            let value = scalar.value
            switch value {
            case 0..<0x80: bytes.append(UInt8(value))
            case 0x80..<0x800:
                bytes.append(UInt8(0xC0 | (value >> 6)))
                bytes.append(UInt8(0x80 | (value & 0x3F)))
            case 0x800..<0x10000:
                bytes.append(UInt8(0xE0 | (value >> 12)))
                bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
                bytes.append(UInt8(0x80 | (value & 0x3F)))
            default:
                bytes.append(UInt8(0xF0 | (value >> 18)))
                bytes.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
                bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
                bytes.append(UInt8(0x80 | (value & 0x3F)))
            }
        }
        return Hex.encode(SHA256.hash(data: bytes))
    }

    static func sha256Hex(_ text: String) -> String {
        var text = text
        return Hex.encode(text.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) })
    }

    static func sha256Hex(bytes: [UInt8]) -> String {
        Hex.encode(SHA256.hash(data: bytes))
    }
}
