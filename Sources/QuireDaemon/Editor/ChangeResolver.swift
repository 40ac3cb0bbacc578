import QuireProtocol
import ReplicatingTypes

/// Turns an editor's change, positioned in the text the editor shows, into character-level CRDT
/// operations on that text that say what the person did.
///
/// Guarantees: a change that does not fit the text (a position past the end of a line or of
/// the text, inside a character, a reversed range, lines past the end) throws before anything
/// is modified; whatever the form of the change (a range, whole lines, the full text), only the
/// characters that really differ become operations, so resending a whole line for one keystroke
/// yields one insertion; typed text is one insertion at the place it was typed (the editor's
/// `cursor` decides between places that give the same text) and a replaced word is replaced
/// whole (`TextDiff`), its new text standing where the old stood among others' concurrent
/// typing (`ReplicatingText.replaceInPlace`); a replacement across lines is compared as whole
/// lines (protocol/decisions/edit-intent.md, rules 6 and 7).
enum ChangeResolver {
    typealias Operation = ReplicatingArrayOperation<Unicode.Scalar>

    /// `cursor`: where the editor's cursor is once the change is made, when it said so.
    static func apply(_ change: WireChange, to text: inout ReplicatingText, encoding: PositionEncoding,
                      cursor: TextPosition? = nil) throws(ResponseError) -> [Operation] {
        switch change {
        case .full(let newText):
            return replaceMinimally(0..<text.count, with: Array(newText.unicodeScalars), in: &text, encoding: encoding, cursor: cursor)
        case .range(let range, let newText):
            let textRange = TextRange(start: TextPosition(line: range.start.line, character: range.start.character),
                                      end: TextPosition(line: range.end.line, character: range.end.character))
            let offsets: Range<Int>
            do { offsets = try text.offsets(of: textRange, in: encoding) } catch { throw .positionOutOfRange(error.description) }
            // A range with old characters and new text says the person replaced that stretch.
            let replacing = !offsets.isEmpty && !newText.isEmpty
            var old = offsets, replacement = Array(newText.unicodeScalars)
            if replacing, range.start.line != range.end.line || replacement.contains("\n") {
                (old, replacement) = wholeLines(offsets, replacement, in: text)
            }
            return replaceMinimally(old, with: replacement, in: &text, encoding: encoding, cursor: cursor, replacing: replacing)
        case .lines(let lines, let newLines):
            let lineCount = text.lineCount
            guard lines.upperBound <= lineCount else {
                throw .positionOutOfRange("lines \(lines.lowerBound)..<\(lines.upperBound) reach past the end: the text has \(lineCount) lines")
            }
            let old: Range<Int>
            let replacement: String
            if lines.isEmpty, lines.lowerBound > 0, lines.upperBound < lineCount, newLines.allSatisfy(\.isEmpty) {
                // New empty lines (Vim's `o`, Enter): the breaks typed at the end of the line
                // above, before its old break, as Emacs sends them. What is typed on them next
                // then follows a break of this editor's own, instead of sitting between two
                // breaks anchored at one place, where another's insertion could cut into it.
                let end = text.scalars.startOfParagraph(lines.lowerBound) - 1
                old = end..<end
                replacement = String(repeating: "\n", count: newLines.count)
            } else if lines.upperBound < lineCount {
                old = text.scalars.startOfParagraph(lines.lowerBound)..<text.scalars.startOfParagraph(lines.upperBound)
                replacement = newLines.map { $0 + "\n" }.joined()
            } else if lines.lowerBound == lineCount {
                // Lines appended after the last one.
                old = text.count..<text.count
                replacement = newLines.map { "\n" + $0 }.joined()
            } else if lines.lowerBound > 0 {
                // The region reaches the end of the text: take the break before it instead of after.
                old = (text.scalars.startOfParagraph(lines.lowerBound) - 1)..<text.count
                replacement = newLines.map { "\n" + $0 }.joined()
            } else {
                old = 0..<text.count
                replacement = newLines.joined(separator: "\n")
            }
            return replaceMinimally(old, with: Array(replacement.unicodeScalars), in: &text, encoding: encoding, cursor: cursor)
        }
    }

    /// A replacement across lines, grown to the whole lines it touches (with the break after the
    /// last, when there is one): the same change, but one the line-level diff can read. Vim trims
    /// a line move (`:m`, `ddp`, `:sort`) to the characters that differ, cutting it mid-line
    /// (`row |1 a\nrow 2 b\nrow 3| c` becomes `3 c\nrow 1 a\nrow 2`); diffed as it came, the
    /// kept `row ` of one line would start another, and what someone typed at the same time in a
    /// line that stayed put would move with it (protocol/decisions/edit-intent.md, rule 7).
    /// - Complexity: O(log n + the two partial lines)
    static func wholeLines(_ range: Range<Int>, _ replacement: [Unicode.Scalar], in text: ReplicatingText) -> (Range<Int>, [Unicode.Scalar]) {
        let scalars = text.scalars
        let lower = scalars.startOfParagraph(scalars.paragraph(containing: range.lowerBound))
        let lastLine = scalars.paragraph(containing: range.upperBound)
        let lineEnd = scalars.rangeOfParagraph(lastLine).upperBound
        let upper = lastLine + 1 < scalars.paragraphCount ? lineEnd + 1 : lineEnd
        let before = lower < range.lowerBound ? scalars.elements(in: lower..<range.lowerBound) : []
        let after = range.upperBound < upper ? scalars.elements(in: range.upperBound..<upper) : []
        return (lower..<upper, before + replacement + after)
    }

    /// Replaces `range` by `replacement` with only the character edits between the two, aligned
    /// to what the person did (`cursor` is in the text after the change).
    /// - Complexity: O(range + replacement + diff) plus O(log n) per edit.
    static func replaceMinimally(_ range: Range<Int>, with replacement: [Unicode.Scalar], in text: inout ReplicatingText,
                                 encoding: PositionEncoding = .utf32, cursor: TextPosition? = nil, replacing: Bool = false) -> [Operation] {
        let old = range.isEmpty ? [] : text.scalars.elements(in: range)
        let hint = cursor.flatMap { index(of: $0, in: replacement, startingAt: text.position(ofOffset: range.lowerBound, in: encoding), encoding: encoding) }
        var operations: [Operation] = []
        for edit in TextDiff.edits(from: old[...], to: replacement[...], cursor: hint, replacing: replacing).reversed() {
            let lower = range.lowerBound + edit.range.lowerBound, upper = range.lowerBound + edit.range.upperBound
            operations.append(contentsOf: text.replaceInPlace(lower..<upper, with: edit.replacement))
        }
        return operations
    }

    /// Where `position` falls in `replacement` when the replacement starts at `start`: nil when the
    /// position is not within it (the cursor is elsewhere, so it says nothing about this change).
    /// - Complexity: O(replacement).
    static func index(of position: TextPosition, in replacement: [Unicode.Scalar], startingAt start: TextPosition,
                      encoding: PositionEncoding) -> Int? {
        guard position >= start else { return nil }
        var line = start.line, character = start.character
        for (index, scalar) in replacement.enumerated() {
            if line == position.line && character == position.character { return index }
            if scalar == "\n" { line += 1; character = 0 } else { character += encoding.width(of: scalar) }
            if line > position.line { return nil }
        }
        return line == position.line && character == position.character ? replacement.count : nil
    }
}
