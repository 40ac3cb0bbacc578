/// Tells text from binary by a file's first block, as git and most editors do.
///
/// Rule: a NUL byte means binary; otherwise the block must be UTF-8, except that a multi-byte
/// character cut off by the end of the block (when the file goes on) is allowed.
enum TextSniffer {
    /// Why a file whose first bytes are `head` is left out, nil when it is text. `isWholeFile`
    /// says `head` is the whole file (so nothing may be cut off at its end).
    static func reasonToLeaveOut(head: [UInt8], isWholeFile: Bool) -> ProjectScanner.Reason? {
        if head.contains(0) { return .binary }
        var checked = head[...]
        if !isWholeFile { checked = checked.dropLast(incompleteTail(head)) }
        return String(validating: checked, as: UTF8.self) == nil ? .notUTF8 : nil
    }

    /// How many bytes at the end of `bytes` are the start of a character that does not fit.
    static func incompleteTail(_ bytes: [UInt8]) -> Int {
        for back in 1...min(3, max(bytes.count, 1)) where back <= bytes.count {
            let byte = bytes[bytes.count - back]
            if byte & 0xC0 == 0x80 { continue }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return length > back ? back : 0
        }
        return 0
    }
}
