import Testing
@testable import JSON

/// The fast reader `JSONParser` tries first against jansson alone: on every input the parser's
/// answer (value or error) is jansson's, and the shapes editors send are read by the fast reader
/// itself (so the fast path is the one measured and the one checked).
@Suite struct JSONFastReaderTests {
    /// What the fast reader alone makes of `bytes` (nil: it leaves them to jansson).
    static func fast(_ bytes: [UInt8], maximumDepth: Int = 512) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONFastReader(buffer, maximumDepth: maximumDepth)
            return reader.read()
        }
    }

    /// The parser (fast reader, then jansson) and jansson alone agree on `bytes`; when the fast
    /// reader reads them, it reads jansson's value.
    static func expectAgreement(_ bytes: [UInt8], maximumDepth: Int = 512, sourceLocation: SourceLocation = #_sourceLocation) {
        let parser = JSONParser(maximumDepth: maximumDepth)
        let jansson = parser.parseWithJansson(bytes)
        let combined = Result { () throws(JSONParseError) in try parser.parse(bytes) }
        #expect(combined == jansson, "\(String(decoding: bytes.prefix(200), as: UTF8.self).debugDescription)", sourceLocation: sourceLocation)
        if let value = fast(bytes, maximumDepth: maximumDepth) {
            #expect(jansson == .success(value), "the fast reader accepted what jansson reads otherwise", sourceLocation: sourceLocation)
        }
    }

    static func openMessage(_ text: String) -> [UInt8] {
        JSONSerializer().serialize(["jsonrpc": "2.0", "id": 7, "method": "document/open",
                                    "params": ["uri": "src/a.swift", "text": .string(text)]])
    }

    @Test(arguments: SharedConformance.jsonFileNames)
    func conformanceFileGetsJanssonsAnswer(name: String) throws {
        let bytes = try SharedConformance.bytes(ofJSONFile: name)
        Self.expectAgreement(bytes)
        if name.hasPrefix("n_") { #expect(Self.fast(bytes) == nil) }
    }

    static let editorTexts = [
        "", "plain ascii\nsecond line\n", "windows\r\nline ends\r\n", "\u{FEFF}starts with a BOM\n",
        "tabs\tand \"quotes\" and \\backslashes\\ and /slashes/", "control \u{01}\u{1B}[0m\u{7F} characters",
        "non-ASCII: é ü ß 日本語 한국어 עברית", "astral: 😀👍🏽 𝄞 and combining e\u{301}", "NUL \u{0} inside text",
        String(repeating: "a long line without a break ", count: 20_000),
        String(repeating: "ünïcödé line\n", count: 5_000) + "no final break",
        "\u{2028}\u{2029} line and paragraph separators, \u{FFFD} replacement, \u{10FFFF} last scalar",
    ]

    /// Editor texts of every kind: the fast reader reads them, to jansson's value. By index: the
    /// long texts would fill the test log.
    @Test(arguments: editorTexts.indices)
    func editorTextIsReadFastAsJanssonReadsIt(index: Int) {
        let text = Self.editorTexts[index]
        let bytes = Self.openMessage(text)
        Self.expectAgreement(bytes)
        let value = Self.fast(bytes)
        #expect(value?["params"]?["text"] == .string(text))
    }

    /// Hand-written inputs at the edges of what the fast reader takes: each gets jansson's answer.
    @Test(arguments: [
        // escapes, surrogates
        #"["\u00e9\u65E5\uD83D\uDE00", "\/\b\f\n\r\t\"\\"]"#, #"["\uD800"]"#, #"["\uDC00"]"#, #"["\uD800\u0041"]"#,
        #"["\uD800\n"]"#, #"["\u12"]"#, #"["\u12G4"]"#, #"["\x"]"#, #"["\"#, #"["\u0000"]"#, #"{"\u0000":1}"#, #"{"a\u0000b":1}"#,
        // numbers
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "[-0]", "[0]",
        "[01]", "[-01]", "[1.5]", "[1e3]", "[1E3]", "[-]", "[--1]", "[+1]", "[1-2]", "123 ", " 123", "123abc",
        // words
        "[true,false,null]", "[truex]", "[nul]", "[True]", "tru", "nullnull",
        // structure
        "{}", "[]", "[ ]", "{ }", #"{"a":1,"a":2}"#, #"{"a":1,}"#, "[1,]", "[,1]", #"{"a" 1}"#, #"{1:2}"#, "[1 2]",
        "[1] [2]", "[1]x", "", "   ", "\u{FEFF}{}", "{}\u{0}", "1\u{0}", "[1\u{0}]", "[\"a\u{0}b\"]", "[\"tab\tin string\"]",
        " \t\r\n[ \t\r\n1 \t\r\n] \t\r\n", "[\u{0B}1]",
    ])
    func edgeInputGetsJanssonsAnswer(input: String) {
        Self.expectAgreement(Array(input.utf8))
    }

    /// A quote, backslash escape, control byte or non-ASCII scalar at every offset in and around
    /// the 8-byte words the reader skips at once: read where it is, as jansson reads it.
    @Test func specialByteAtEveryWordOffsetIsSeen() {
        for special in [#"\""#, #"\\"#, #"\n"#, #"\u00e9"#, "é", "😀", "\u{1F}", "\u{0}"] {
            for offset in 0..<24 {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: 24 - offset)
                let bytes = Array(#"{"k":""#.utf8) + Array(text.utf8) + Array(#""}"#.utf8)
                Self.expectAgreement(bytes)
                let isRawControl = special == "\u{1F}" || special == "\u{0}"
                #expect((Self.fast(bytes) != nil) == !isRawControl, "\(special.debugDescription) at \(offset)")
            }
        }
    }

    /// Bytes that are not UTF-8, inside and outside strings: refused, with jansson's error.
    @Test(arguments: [
        [0xFF], [0xC0, 0xAF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
        [0x80], [0xC3, 0x28], [0xE0, 0x80, 0xAF], [0xF0, 0x80, 0x80, 0xAF],
    ] as [[UInt8]])
    func invalidUTF8IsRefusedAsJanssonRefusesIt(sequence: [UInt8]) {
        let inString = Array(#"{"text":"ok "#.utf8) + sequence + Array(#" ok\nmore"}"#.utf8)
        let atEscape = Array(#"["a"#.utf8) + sequence + Array(#"\n"]"#.utf8)
        let outside = Array("[1,".utf8) + sequence + Array("]".utf8)
        for bytes in [inString, atEscape, outside] {
            Self.expectAgreement(bytes)
            #expect(Self.fast(bytes) == nil)
            #expect(throws: JSONParseError.self) { try JSONParser().parse(bytes) }
        }
    }

    /// Nesting at and past the parser's limit: the depth error is the parser's own, as before.
    @Test func nestingAtTheLimitGetsTheParsersAnswer() {
        for depth in [1, 63, 64, 65, 600, 1100, 2100] {
            let bytes = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            Self.expectAgreement(bytes, maximumDepth: 64)
            Self.expectAgreement(bytes, maximumDepth: 4096)
            let objects = Array((String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8)
            Self.expectAgreement(objects, maximumDepth: 64)
        }
        #expect(Self.fast(Array("[[[]]]".utf8), maximumDepth: 3) != nil)
        #expect(Self.fast(Array("[[[[]]]]".utf8), maximumDepth: 3) == nil)
    }

    /// Seeded random damage to real messages (bytes replaced, dropped, doubled): the parser always
    /// answers as jansson alone does.
    @Test func damagedMessagesGetJanssonsAnswer() {
        let seeds: [[UInt8]] = [
            Self.openMessage("func f() {\r\n\tprint(\"héllo 😀\")\n}\n"),
            Array(#"{"jsonrpc":"2.0","id":3,"method":"document/edit","params":{"uri":"a","epoch":0,"revision":2,"changes":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"text":"x\u00e9\uD83D\uDE00"}]}}"#.utf8),
            Array(#"[{"jsonrpc":"2.0","method":"n","params":[1,-2,true,false,null,"s"]},{"a":{"b":[[],{}]}}]"#.utf8),
        ]
        let alphabet: [UInt8] = Array(#"{}[],:"\/bfnrtu0123456789-+.eE aZ"#.utf8) + [0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xF0, 0xFF]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(bound))
        }
        for round in 0..<3_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...next(3) {
                let at = next(bytes.count)
                switch next(3) {
                case 0: bytes[at] = alphabet[next(alphabet.count)]
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
                if bytes.isEmpty { break }
            }
            Self.expectAgreement(bytes)
        }
    }
}
