import ReplicatingTypes

/// A document's link to a file on disk: where it is, how the file stores its text, and what
/// Quire last knew the file to hold.
///
/// Guarantees: when `hash` matches the file's SHA-256, the file holds the text of `base` (the
/// document state Quire last read from it or wrote to it, or an editor saved) as `format`
/// encodes it, so a file whose hash differs was changed outside Quire by exactly the difference
/// between `base`'s text and the file's decoded text.
struct FileBinding {
    var path: String
    /// SHA-256 (hex) of the file's bytes when Quire last read or wrote it; nil when it did not exist.
    var hash: String?
    /// The document state whose text the file held then.
    var base: ReplicatingText
    /// How the file stores its text (line endings, BOM, final newline), as last seen on disk.
    var format = FileFormat.plain
}

/// How a file stores the text an editor shows: its line endings, a UTF-8 byte order mark, and
/// whether it ends in a line break. The document holds the text as editors show it (`\n` line
/// breaks, no BOM); the binding keeps these properties and writes them back.
///
/// Rules (protocol/README.md, "Files"):
/// 1. A file whose every `\n` follows a `\r` (and has at least one) has CRLF line endings: its
///    text is read with `\n` breaks and written with `\r\n`. In any other file (LF, or mixed),
///    a `\r` is an ordinary character, kept in the text, so the file round-trips byte for byte.
/// 2. A leading UTF-8 BOM (EF BB BF) is taken off when read and put back when written.
/// 3. `finalNewline`: the file ends in a line break. The text is written as it is, except that a
///    file known to end in a break gets one added when the text lacks it (what Vim's `fixeol`
///    and Emacs's `require-final-newline` do); a break is never taken away.
struct FileFormat: Equatable, Sendable {
    var crlf: Bool
    var bom: Bool
    var finalNewline: Bool

    /// LF, no BOM, written exactly as the text is: a new file, or a binding recorded before
    /// formats were kept.
    static let plain = FileFormat(crlf: false, bom: false, finalNewline: false)

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The text a file's bytes show in an editor, and the file's format; nil when the bytes
    /// are not UTF-8.
    /// - Complexity: O(bytes).
    static func decode(_ bytes: [UInt8]) -> (text: String, format: FileFormat)? {
        let bom = bytes.starts(with: byteOrderMark)
        let body = bom ? bytes[byteOrderMark.count...] : bytes[...]
        var lineFeeds = 0, crlfs = 0
        var previous: UInt8 = 0
        for byte in body {
            if byte == 0x0A {
                lineFeeds += 1
                if previous == 0x0D { crlfs += 1 }
            }
            previous = byte
        }
        let crlf = lineFeeds > 0 && crlfs == lineFeeds
        var decoded = [UInt8]()
        if crlf {
            decoded.reserveCapacity(body.count - crlfs)
            var index = body.startIndex
            while index < body.endIndex {
                let next = body.index(after: index)
                if body[index] == 0x0D, next < body.endIndex, body[next] == 0x0A {
                    index = next
                    continue
                }
                decoded.append(body[index])
                index = next
            }
        } else {
            decoded = Array(body)
        }
        guard let text = String(validating: decoded, as: UTF8.self) else { return nil }
        return (text, FileFormat(crlf: crlf, bom: bom, finalNewline: decoded.last == 0x0A))
    }

    /// The bytes of a file in this format holding `text` (as editors show it).
    /// - Complexity: O(text).
    func encode(_ text: String) -> [UInt8] {
        var bytes = bom ? Self.byteOrderMark : []
        let utf8 = text.utf8
        bytes.reserveCapacity(bytes.count + utf8.count + (crlf ? utf8.count / 16 : 0) + 2)
        for byte in utf8 {
            if crlf && byte == 0x0A { bytes.append(0x0D) }
            bytes.append(byte)
        }
        if addsFinalBreak(to: text) {
            if crlf { bytes.append(0x0D) }
            bytes.append(0x0A)
        }
        return bytes
    }

    /// The text of a file in this format holding `text`: `text` itself when the format adds
    /// nothing to it (LF, no BOM, no final break to add: most source files), without copying it
    /// byte by byte as `encode` does.
    /// - Complexity: O(1) then, else O(text).
    func encodedText(_ text: String) -> String {
        if !crlf, !bom, !addsFinalBreak(to: text) { return text }
        return String(decoding: encode(text), as: UTF8.self)
    }

    /// Whether a file in this format holding `text` gets a line break `text` lacks (rule 3).
    private func addsFinalBreak(to text: String) -> Bool {
        finalNewline && !text.isEmpty && text.utf8.last != 0x0A
    }

    /// `fileText` (a file's decoded text) compared with `text` (what Quire knows): a final
    /// break that the file has and `text` lacks is the file's format, not a change of text
    /// (an editor's `fixeol` added it on save), so it is taken off. A break the file lacks and
    /// `text` has is a real change and stays.
    static func comparable(_ fileText: String, to text: String) -> String {
        guard fileText.utf8.last == 0x0A, text.utf8.last != 0x0A else { return fileText }
        return String(fileText.dropLast())
    }
}
