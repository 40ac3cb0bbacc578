import Crypto

/// The hash editors compare their text against: SHA-256 of the whole text's UTF-8 bytes, as
/// lowercase hex (what Vim's `sha256()` and Emacs's `secure-hash` print).
enum TextHash {
    static func sha256Hex(_ text: String) -> String {
        var text = text
        let digest = text.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        return digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
