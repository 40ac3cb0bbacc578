import ReplicatingTypes

/// A replicated text made from a whole text at once (a document an editor's `document/open`
/// creates): the same text, with the same one insertion, as `ReplicatingText(text, replica:)`,
/// but the text's scalars are decoded in one pass over its UTF-8, counted by its lead bytes,
/// where `Array(text.unicodeScalars)` decodes it twice (once to count, once to copy).
enum FreshText {
    /// The text `text`, inserted by `replica`, and its operations (its one insertion: what
    /// `operations()` of it gives, without reading them back from it).
    static func make(_ text: String, replica: ReplicaID) -> (text: ReplicatingText, operations: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        var made = ReplicatingText(replica: replica)
        let scalars = scalars(of: text)
        let operations = scalars.isEmpty ? [] : made.replace(0..<0, with: scalars)
        return (made, operations)
    }

    /// `Array(text.unicodeScalars)`, decoded in one pass. A `String`'s UTF-8 is always valid,
    /// so every lead byte starts a whole scalar; the writes stay inside the counted capacity
    /// whatever the bytes are.
    /// - Complexity: O(n), a counting pass and a decoding pass over the UTF-8 bytes.
    static func scalars(of text: String) -> [Unicode.Scalar] {
        var text = text
        return text.withUTF8 { utf8 in
            let count = scalarCount(utf8)
            return [Unicode.Scalar](unsafeUninitializedCapacity: count) { buffer, initialized in
                var i = 0, o = 0
                let n = utf8.count
                while i < n, o < count {
                    // Eight ASCII bytes at once.
                    if n - i >= 8, count - o >= 8, let base = utf8.baseAddress {
                        let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                        if word & 0x8080_8080_8080_8080 == 0 {
                            for k in 0..<8 { buffer[o + k] = Unicode.Scalar(UInt8(truncatingIfNeeded: word >> (8 * UInt64(k)))) }
                            o += 8
                            i += 8
                            continue
                        }
                    }
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

    /// The scalars in valid UTF-8: its bytes that are not continuation bytes (`10xxxxxx`),
    /// eight at a time.
    static func scalarCount(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0, i = 0
        if let base = utf8.baseAddress {
            while utf8.count - i >= 8 {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                // Bit 7 set and bit 6 clear: a continuation byte (the shift's carries land in bit 0).
                let continuations = word & ~(word << 1) & 0x8080_8080_8080_8080
                count &+= 8 &- continuations.nonzeroBitCount
                i += 8
            }
        }
        while i < utf8.count {
            count &+= utf8[i] & 0xC0 == 0x80 ? 0 : 1
            i += 1
        }
        return count
    }
}
