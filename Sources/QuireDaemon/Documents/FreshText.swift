import ReplicatingTypes

/// A replicated text made from a whole text at once (a document an editor's `document/open`
/// creates): the same text, with the same one insertion, as `ReplicatingText(text, replica:)`,
/// but the text's scalars are decoded in one pass over its UTF-8, counted by its lead bytes,
/// where `Array(text.unicodeScalars)` decodes it twice (once to count, once to copy).
enum FreshText {
    /// The text `text`, inserted by `replica`.
    static func make(_ text: String, replica: ReplicaID) -> ReplicatingText {
        var made = ReplicatingText(replica: replica)
        let scalars = scalars(of: text)
        if !scalars.isEmpty { _ = made.replace(0..<0, with: scalars) }
        return made
    }

    /// `Array(text.unicodeScalars)`, decoded in one pass. A `String`'s UTF-8 is always valid,
    /// so every lead byte starts a whole scalar; the writes stay inside the counted capacity
    /// whatever the bytes are.
    /// - Complexity: O(n), a counting pass and a decoding pass over the UTF-8 bytes.
    static func scalars(of text: String) -> [Unicode.Scalar] {
        var text = text
        return text.withUTF8 { utf8 in
            var count = 0
            for byte in utf8 { count &+= byte & 0xC0 == 0x80 ? 0 : 1 }
            return [Unicode.Scalar](unsafeUninitializedCapacity: count) { buffer, initialized in
                var i = 0, o = 0
                let n = utf8.count
                while i < n, o < count {
                    if utf8[i] < 0x80 {
                        buffer[o] = Unicode.Scalar(utf8[i])
                        o += 1
                        i += 1
                        continue
                    }
                    let lead = UInt32(utf8[i])
                    var value: UInt32
                    var width: Int
                    switch lead {
                    case 0xC0..<0xE0: value = lead & 0x1F; width = 2
                    case 0xE0..<0xF0: value = lead & 0x0F; width = 3
                    default: value = lead & 0x07; width = 4
                    }
                    width = min(width, n - i)
                    for k in 1..<max(width, 1) { value = value << 6 | UInt32(utf8[i + k] & 0x3F) }
                    buffer[o] = Unicode.Scalar(value) ?? "\u{FFFD}"
                    o += 1
                    i += width
                }
                initialized = o
            }
        }
    }
}
