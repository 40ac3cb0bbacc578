import EditingTraces
import Testing
import ReplicatingTypes

@Suite struct ReplicatingTextTests {
    @Test func positionsInEveryEncodingWithAstralAndCombiningCharacters() throws {
        // "e\u{301}" is a combining sequence (2 scalars); 😀 is astral (4 UTF-8 bytes, 2 UTF-16 units).
        let text = ReplicatingText("ae\u{301}😀b\r\n中x\n", replica: ReplicaID(1))
        #expect(text.lineCount == 3)
        #expect(text.line(0) == "ae\u{301}😀b\r")
        #expect(text.line(1) == "中x")
        #expect(text.line(2) == "")
        // Offset of "b" on line 0 is scalar 4.
        #expect(try text.offset(of: TextPosition(line: 0, character: 4), in: .utf32) == 4)
        #expect(try text.offset(of: TextPosition(line: 0, character: 5), in: .utf16) == 4)
        #expect(try text.offset(of: TextPosition(line: 0, character: 8), in: .utf8) == 4)
        #expect(try text.offset(of: TextPosition(line: 1, character: 3), in: .utf8) == 8)
        #expect(text.position(ofOffset: 4, in: .utf16) == TextPosition(line: 0, character: 5))
        #expect(text.position(ofOffset: 4, in: .utf8) == TextPosition(line: 0, character: 8))
        #expect(text.position(ofOffset: 10, in: .utf8) == TextPosition(line: 2, character: 0))
        // Inside the emoji's encoding, past the end of a line, past the last line.
        #expect(throws: TextPositionError.insideCharacter(TextPosition(line: 0, character: 4), encoding: .utf16)) {
            try text.offset(of: TextPosition(line: 0, character: 4), in: .utf16)
        }
        #expect(throws: TextPositionError.insideCharacter(TextPosition(line: 0, character: 5), encoding: .utf8)) {
            try text.offset(of: TextPosition(line: 0, character: 5), in: .utf8)
        }
        #expect(throws: TextPositionError.characterOutOfRange(TextPosition(line: 1, character: 3), lineLength: 2, encoding: .utf32)) {
            try text.offset(of: TextPosition(line: 1, character: 3), in: .utf32)
        }
        #expect(throws: TextPositionError.lineOutOfRange(line: 3, lineCount: 3)) {
            try text.offset(of: TextPosition(line: 3, character: 0), in: .utf32)
        }
        #expect(throws: TextPositionError.negative(TextPosition(line: -1, character: 0))) {
            try text.offset(of: TextPosition(line: -1, character: 0), in: .utf8)
        }
    }

    @Test func badRangeChangesNothing() {
        var text = ReplicatingText("abc\ndef", replica: ReplicaID(1))
        let before = text
        #expect(throws: TextPositionError.self) {
            try text.replace(TextRange(start: TextPosition(line: 1, character: 1), end: TextPosition(line: 0, character: 1)), with: "x", in: .utf32)
        }
        #expect(throws: TextPositionError.self) {
            try text.replace(TextRange(start: TextPosition(line: 0, character: 1), end: TextPosition(line: 1, character: 9)), with: "x", in: .utf32)
        }
        #expect(text == before)
        #expect(text.string == "abc\ndef")
    }

    @Test func emptyTextHasOneEmptyLine() throws {
        var text = ReplicatingText(replica: ReplicaID(1))
        #expect(text.lineCount == 1 && text.line(0) == "" && text.string == "")
        #expect(try text.offset(of: TextPosition(line: 0, character: 0), in: .utf16) == 0)
        try text.replace(TextRange(start: TextPosition(line: 0, character: 0), end: TextPosition(line: 0, character: 0)), with: "x\n", in: .utf16)
        #expect(text.lineCount == 2 && text.string == "x\n")
    }

    /// Random edits by position in every encoding against a plain String oracle.
    @Test(arguments: [31, 32, 33] as [UInt64])
    func positionOracle(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var text = ReplicatingText(replica: ReplicaID(2))
        var oracle: [Unicode.Scalar] = []
        for step in 0..<400 {
            let encoding = PositionEncoding.allCases.randomElement(using: &random)!
            // Split on scalars: as a String, "\r\n" would be one Character and hide the break.
            let lines = oracle.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
            #expect(text.lineCount == lines.count, "seed \(seed) step \(step)")
            let line = Int.random(in: 0..<lines.count, using: &random)
            let column = Int.random(in: 0...lines[line].count, using: &random)
            let position = TextPosition(line: line, character: encoding.width(of: lines[line][..<column]))
            let offset = lines[..<line].reduce(0) { $0 + $1.count + 1 } + column
            #expect(try text.offset(of: position, in: encoding) == offset, "seed \(seed) step \(step)")
            #expect(text.position(ofOffset: offset, in: encoding) == position)
            let removable = Swift.min(3, oracle.count - offset)
            let n = removable > 0 ? Int.random(in: 0...removable, using: &random) : 0
            let insert = (0..<Int.random(in: 0...3, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! }
            text.replace(offset..<(offset + n), with: insert)
            oracle.replaceSubrange(offset..<(offset + n), with: insert)
            #expect(text.string == oracle.string, "seed \(seed) step \(step)")
        }
        text.scalars._checkInvariants()
    }

    @Test func crlfRoundTrips() {
        let source = "first\r\nsecond\r\n\r\nlast"
        let text = ReplicatingText(source, replica: ReplicaID(1))
        #expect(text.string == source)
        #expect(text.lineCount == 4)
        #expect(text.line(1) == "second\r")
    }

    @Test func remoteChangesArriveAsEditorReadyPositions() {
        var a = ReplicatingText("héllo\nwörld\n", replica: ReplicaID(1))
        var b = a
        b.replica = ReplicaID(2)
        var editorView = a.string
        let ops = a.replace(8..<10, with: Array("😀\nX".unicodeScalars)) + a.replace(0..<2, with: [])
        for op in ops {
            for change in b.apply(op, reportingIn: .utf16) {
                editorView = Self.applyUTF16(change, to: editorView)
            }
        }
        #expect(b.string == a.string)
        #expect(editorView == a.string)
    }

    /// Applies an LSP-style change with UTF-16 positions to a String, as an editor would.
    static func applyUTF16(_ change: TextChange, to text: String) -> String {
        var lines = text.components(separatedBy: "\n").map { Array($0.utf16) }
        let start = change.range.start, end = change.range.end
        let prefix = lines[start.line][..<start.character]
        let suffix = lines[end.line][end.character...]
        let merged = String(decoding: prefix, as: UTF16.self) + change.text + String(decoding: suffix, as: UTF16.self)
        lines.replaceSubrange(start.line...end.line, with: merged.components(separatedBy: "\n").map { Array($0.utf16) })
        return lines.map { String(decoding: $0, as: UTF16.self) }.joined(separator: "\n")
    }

    @Test func wholeTextReplacementBecomesMinimalEdits() {
        var text = ReplicatingText("alpha\nbeta\ngamma\n", replica: ReplicaID(1))
        let ops = text.replaceAll(with: "alpha\nbetta\ngamma\n")
        #expect(text.string == "alpha\nbetta\ngamma\n")
        #expect(ops.count == 1)
        guard case .insert(let insertion) = ops.first else { Issue.record("expected one insertion"); return }
        #expect(insertion.count == 1)
    }

    @Test func resentLineForOneKeystrokeIsOneInsert() {
        var text = ReplicatingText("line one\nline two\n", replica: ReplicaID(1))
        let ops = text.replaceLines(1..<2, with: "line tw!o")
        #expect(text.string == "line one\nline tw!o\n")
        #expect(ops.count == 1)
    }

    @Test func codableRoundTrip() throws {
        var text = ReplicatingText("abc\ndef", replica: ReplicaID(5))
        text.replace(1..<2, with: Array("XY".unicodeScalars))
        let data = try JSONEncoderShim.encode(text)
        let decoded = try JSONEncoderShim.decode(ReplicatingText.self, from: data)
        #expect(decoded == text)
        #expect(decoded.string == "aXYc\ndef")
        #expect(decoded.lineCount == 2)
    }
}

import Foundation

enum JSONEncoderShim {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}

/// A whole file inserted at once (an editor opening it) is split into paragraphs correctly,
/// also in the middle of existing text.
@Suite struct LargeInsertionTests {
    @Test func manyParagraphsInsertedAtOnce() {
        let lines = (0..<3000).map { "line \($0) — with “quotes” and 😀" }
        let text = lines.joined(separator: "\n") + "\n"
        var doc = ReplicatingText(text, replica: ReplicaID(1))
        #expect(doc.scalars._checkInvariants() >= 0)
        #expect(doc.lineCount == 3001)
        #expect(doc.line(1234) == lines[1234])
        doc.replace(doc.scalars.startOfParagraph(10)..<doc.scalars.startOfParagraph(10), with: Array("a\nb\nc\n".unicodeScalars))
        doc.scalars._checkInvariants()
        #expect(doc.line(10) == "a" && doc.line(12) == "c" && doc.line(13) == lines[10])
        #expect(doc.string == (lines[..<10] + ["a", "b", "c"] + lines[10...]).joined(separator: "\n") + "\n")
    }

    /// Removed text put back after its own tombstones comes back in order, whichever order it
    /// was removed and put back in, and other replicas place it the same way.
    @Test func insertingAfterTombstonesRestoresTextInPlace() {
        for removalOrder in [[0, 1, 2], [2, 1, 0]] {
            var text = ReplicatingText("xabcy", replica: ReplicaID(1))
            let ids = (1...3).map { text.scalars.id(at: $0) }
            var operations = text.operations()
            for i in removalOrder { operations += text.replace(text.scalars.index(of: ids[i])!..<(text.scalars.index(of: ids[i])! + 1), with: []) }
            #expect(text.string == "xy")
            text.replica = ReplicaID(2)
            for i in [2, 0, 1] {
                if let op = text.insert([["a", "b", "c"][i]], after: ids[i]) { operations.append(op) }
            }
            #expect(text.string == "xabcy", "removed in order \(removalOrder)")
            var other = ReplicatingText(replica: ReplicaID(3))
            for op in operations.reversed() { other.apply(op) }
            #expect(other.string == "xabcy")
            #expect(text.insert(["z"], after: ElementID(replica: ReplicaID(99), counter: 0)) == nil, "an unknown anchor inserts nothing")
        }
    }
}
