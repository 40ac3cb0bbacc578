import Testing
import JSON

/// Parsing and serializing edge cases the daemon depends on: exact integers, embedded NUL,
/// depth limits, sorted keys, astral characters, and error positions.
@Suite struct JSONValueTests {
    @Test func integersStayExactAndFractionsBecomeDoubles() throws {
        let value = try JSONParser().parse(#"[9223372036854775807, -9223372036854775808, 1.5, 1e2]"#)
        #expect(value == [.integer(.max), .integer(.min), .double(1.5), .double(100)])
    }

    @Test func integerOutsideInt64IsAParseError() {
        #expect(throws: JSONParseError.self) { try JSONParser().parse("9223372036854775808") }
    }

    @Test func embeddedNulAndAstralCharactersRoundTrip() throws {
        let value: JSONValue = ["k\u{0}ey": "a\u{0}b😀\u{301}", "plain": "x"]
        let text = JSONSerializer(sortedKeys: true).string(["s": "a\u{0}b😀"])
        #expect(text == #"{"s":"a\u0000b😀"}"#)
        // Keys with NUL are refused by jansson on parse, so only check the value path here.
        let reparsed = try JSONParser().parse(JSONSerializer().serialize(["v": value["plain"] ?? .null, "w": "a\u{0}b😀\u{301}"]))
        #expect(reparsed["w"] == "a\u{0}b😀\u{301}")
    }

    @Test func sortedKeysAreDeterministic() {
        let value: JSONValue = ["b": 1, "a": [true, .null, 2.5], "c": ["z": "y", "x": "w"]]
        #expect(JSONSerializer(sortedKeys: true).string(value) == #"{"a":[true,null,2.5],"b":1,"c":{"x":"w","z":"y"}}"#)
    }

    @Test func nestingDeeperThanTheLimitIsRejected() throws {
        let parser = JSONParser(maximumDepth: 4)
        #expect(throws: JSONParseError.self) { try parser.parse("[[[[[1]]]]]") }
        #expect(try parser.parse("[[[[1]]]]") == [[[[1]]]])
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSONParseError.self) { try JSONParser().parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func errorsSayWhereTheyHappened() {
        do {
            _ = try JSONParser().parse("{\"a\": tru}")
            Issue.record("expected an error")
        } catch {
            #expect(error.byteOffset > 0)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func nonFiniteDoublesSerializeAsNull() {
        #expect(JSONSerializer().string([.double(.infinity), .double(.nan)]) == "[null,null]")
    }

    @Test func doublesRoundTripExactly() throws {
        for d in [0.1, 1.0 / 3.0, 1e-300, 123456789.123456789, -2.5e17] {
            #expect(try JSONParser().parse(JSONSerializer().serialize(.double(d))) == .double(d))
        }
    }
}
