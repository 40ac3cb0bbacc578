import Testing
@testable import QuireDaemon
import ReplicatingTypes

/// `FreshText`, the one-pass way `document/open` makes a document from the editor's text,
/// against the general `ReplicatingText(text, replica:)`: the same scalars, the same operations,
/// the same encoded state, for every kind of text an editor sends.
@Suite struct FreshTextTests {
    static let texts: [String] = [
        "", "a", "\n", "plain ascii\nsecond line\n", "windows\r\nline ends\r\n\r\n", "\r", "lone \r carriage returns\r",
        "\u{FEFF}starts with a BOM\n", "a BOM \u{FEFF} inside", "non-ASCII: é ü ß 日本語 한국어 עברית العربية",
        "astral: 😀👍🏽 𝄞 \u{10FFFF} and combining e\u{301} and ZWJ 👩‍👩‍👧", "NUL \u{0} and controls \u{1}\u{1B}\u{7F}\u{80}\u{9F}",
        "\u{2028}\u{2029}\u{85} other breaks", String(repeating: "a long line without a break, ", count: 40_000),
        String(repeating: "ünïcödé 日本 😀 line\r\n", count: 3_000) + "no final break",
        // What `String(decoding:)` makes of bytes that are not UTF-8 (replacement characters).
        String(decoding: [0x61, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0xF4, 0x90, 0x80, 0x80, 0xE2, 0x82, 0x0A, 0x62] as [UInt8], as: UTF8.self),
    ]

    /// By index: the long texts would fill the test log.
    @Test(arguments: texts.indices)
    func scalarsAreTheTextsScalars(index: Int) {
        let text = Self.texts[index]
        #expect(FreshText.scalars(of: text) == Array(text.unicodeScalars))
    }

    @Test(arguments: texts.indices)
    func freshTextIsTheGeneralOne(index: Int) {
        let text = Self.texts[index]
        let replica = ReplicaID(0x5eed)
        let (fresh, operations) = FreshText.make(text, replica: replica)
        let general = ReplicatingText(text, replica: replica)
        #expect(operations == general.operations())
        #expect(fresh.string == text)
        #expect(fresh == general)
        #expect(fresh.lineCount == general.lineCount)
        #expect(fresh.operations() == general.operations())
        #expect(fresh.encodedState() == general.encodedState())
    }

    /// Every scalar width at every position: one to four UTF-8 bytes, seeded.
    @Test func mixedWidthsDecodeAsTheStandardLibraryDoes() {
        let pool: [Unicode.Scalar] = ["a", "\n", "\r", "\u{0}", "\u{7F}", "\u{80}", "é", "\u{7FF}", "\u{800}", "日", "\u{FEFF}", "\u{FFFD}",
                                      "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}"]
        let mostlyASCII = pool + Array(repeating: "x", count: 40)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for (length, pool) in [1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 1_000].flatMap({ [($0, pool), ($0, mostlyASCII)] }) {
            var view = String.UnicodeScalarView()
            for _ in 0..<length {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                view.append(pool[Int(state % UInt64(pool.count))])
            }
            let text = String(view)
            #expect(FreshText.scalars(of: text) == Array(text.unicodeScalars))
            let (fresh, operations) = FreshText.make(text, replica: ReplicaID(7))
            #expect(fresh == ReplicatingText(text, replica: ReplicaID(7)))
            #expect(operations == fresh.operations())
        }
    }
}
