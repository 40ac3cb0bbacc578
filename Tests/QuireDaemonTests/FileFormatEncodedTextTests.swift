import Testing
@testable import QuireDaemon

/// `FileFormat.encodedText`, the disk pass's shortcut, gives exactly the text `encode` writes,
/// for every format and every way a text can end.
@Suite struct FileFormatEncodedTextTests {
    @Test func theShortcutMatchesTheEncodingForEveryFormat() {
        let texts = ["", "x", "f(x)\n", "<A17> = \"s\"", "a\nb", "a\nb\n", "\r\n", "a\r", "é\u{FEFF}\n\n"]
        for crlf in [false, true] {
            for bom in [false, true] {
                for finalNewline in [false, true] {
                    let format = FileFormat(crlf: crlf, bom: bom, finalNewline: finalNewline)
                    for text in texts {
                        #expect(Array(format.encodedText(text).utf8) == format.encode(text), "\(format) \(text.debugDescription)")
                    }
                }
            }
        }
    }
}
