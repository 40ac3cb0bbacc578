import Crypto
import ReplicatingTypes

/// The hash editors compare their text against: SHA-256 of the whole text's UTF-8 bytes, as
/// lowercase hex (what Vim's `sha256()` and Emacs's `secure-hash` print).
enum TextHash {
    /// The hash of a replicated text, encoded straight from its scalars (no `String` built).
    /// - Complexity: O(n)
    static func sha256Hex(_ text: ReplicatingText) -> String {
        let count = text.utf8Count
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = text.writeUTF8(into: buffer)
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
