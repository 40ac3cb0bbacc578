/// One replacement in a text: the scalars at `range` of the old text become `replacement`.
public struct TextEdit: Hashable, Sendable {
    public var range: Range<Int>
    public var replacement: [Unicode.Scalar]

    public init(range: Range<Int>, replacement: [Unicode.Scalar]) {
        self.range = range
        self.replacement = replacement
    }
}

/// Reduces a change of text to the character-level edits that say what the person did: line-level
/// first (among equally short line scripts, one that keeps the lines standing where they stood,
/// so a `:sort` or line move leaves the lines that did not move alone), then character-level
/// inside changed lines, aligned by `EditAlignment`'s rules (typed text stays one insertion at
/// the place it was typed, a replaced word is replaced whole).
///
/// Guarantees: the edits are sorted, disjoint, refer to offsets (in scalars) of the old text, and
/// turn the old text into the new one when applied from last to first. Typing and deleting stay
/// character-precise (one keystroke in a resent line is one inserted character). A change of
/// many lines that keeps their number (a substitution over the whole text) is diffed line by
/// line when it is too large to diff at once, so it stays per-line edits whatever its size;
/// only a region that also adds or removes lines and holds more than `characterBudget`
/// character differences becomes one replacement. A common prefix
/// and suffix are skipped in linear time, so one changed line in a 3 MB document costs one pass
/// over it.
public enum TextDiff {
    /// `cursor`, when the editor said where its cursor ended up, is an offset into `new`: an
    /// insertion or removal that could stand at several places goes where it was typed.
    public static func edits(from old: [Unicode.Scalar], to new: [Unicode.Scalar], cursor: Int? = nil) -> [TextEdit] {
        edits(from: old[...], to: new[...], cursor: cursor)
    }

    public static func edits(from old: String, to new: String, cursor: Int? = nil) -> [TextEdit] {
        edits(from: Array(old.unicodeScalars), to: Array(new.unicodeScalars), cursor: cursor)
    }

    /// `cursor` is an index of `new` (slices keep their base's indices). `replacing`: the editor
    /// said it replaced `old` with `new` (a range change), so no word of `new` is rebuilt from
    /// letters of `old` (`EditAlignment`, rule 4).
    public static func edits(from old: ArraySlice<Unicode.Scalar>, to new: ArraySlice<Unicode.Scalar>, cursor: Int? = nil,
                             replacing: Bool = false) -> [TextEdit] {
        var edits: [TextEdit] = []
        // Line level: compare whole lines (each with its break) by number; among equally short
        // scripts, lines that stand where they stood stay (a `:sort` keeps its middle line).
        var numbering: [ArraySlice<Unicode.Scalar>: Int] = [:]
        let oldLines = lines(of: old), newLines = lines(of: new)
        let oldIDs = oldLines.map { number(old[$0], in: &numbering) }
        let newIDs = newLines.map { number(new[$0], in: &numbering) }
        for hunk in MyersDiff.hunksKeepingInPlace(oldIDs[...], newIDs[...], maxEdits: 1024) {
            let oldRange = span(of: hunk.old, in: oldLines, base: old.startIndex, end: old.endIndex)
            let newRange = span(of: hunk.new, in: newLines, base: new.startIndex, end: new.endIndex)
            // A new empty line (Enter at the end of a line, Vim's `o`) is the line break typed at
            // the end of the line above, before its old break, as Emacs sends it: what is typed
            // next then follows this break instead of sitting between two breaks anchored at
            // the same place, where a concurrent insertion there could cut into it (edit-intent.md, rule 8).
            if oldRange.isEmpty, newRange.count == 1, new[newRange.lowerBound] == "\n",
               oldRange.lowerBound > old.startIndex, old[oldRange.lowerBound - 1] == "\n" {
                let at = oldRange.lowerBound - 1 - old.startIndex
                edits.append(TextEdit(range: at..<at, replacement: ["\n"]))
                continue
            }
            // Character level inside the changed lines: all of them at once while that stays
            // within budget; otherwise (a `:%s` over many lines) line by line, so that a change
            // of every line is still the few characters changed in each, never one replacement
            // of the whole stretch (which would carry away what others type between them, and
            // make its undo restore the stretch as one block).
            var regions: [(old: Range<Int>, new: Range<Int>, hunks: [MyersDiff.Hunk])] = []
            if let whole = MyersDiff.exactHunks(old[oldRange], new[newRange], maxEdits: Self.characterBudget) {
                regions = [(oldRange, newRange, whole)]
            } else if hunk.old.count == hunk.new.count, hunk.old.count > 1 {
                for k in 0..<hunk.old.count {
                    let oldLine = span(of: (hunk.old.lowerBound + k)..<(hunk.old.lowerBound + k + 1), in: oldLines,
                                       base: old.startIndex, end: old.endIndex)
                    let newLine = span(of: (hunk.new.lowerBound + k)..<(hunk.new.lowerBound + k + 1), in: newLines,
                                       base: new.startIndex, end: new.endIndex)
                    regions.append((oldLine, newLine, MyersDiff.hunks(old[oldLine], new[newLine], maxEdits: Self.characterBudget)))
                }
            } else {
                regions = [(oldRange, newRange, [MyersDiff.commonPrefixAndSuffix(old[oldRange], new[newRange])])]
            }
            for region in regions {
                for inner in EditAlignment.align(region.hunks, old: old[region.old], new: new[region.new], cursor: cursor, replacing: replacing) {
                    edits.append(TextEdit(range: (inner.old.lowerBound - old.startIndex)..<(inner.old.upperBound - old.startIndex),
                                          replacement: Array(new[inner.new])))
                }
            }
        }
        return edits
    }

    /// Character differences one Myers run looks for before giving up on a region.
    static let characterBudget = 1024

    /// Applies `edits` (as produced by `edits(from:to:)`) to `text`.
    public static func apply(_ edits: [TextEdit], to text: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var result = text
        for edit in edits.reversed() { result.replaceSubrange(edit.range, with: edit.replacement) }
        return result
    }

    private static func lines(of text: ArraySlice<Unicode.Scalar>) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start = text.startIndex
        for i in text.indices where text[i] == "\n" {
            result.append(start..<(i + 1))
            start = i + 1
        }
        if start < text.endIndex { result.append(start..<text.endIndex) }
        return result
    }

    private static func number(_ line: ArraySlice<Unicode.Scalar>, in numbering: inout [ArraySlice<Unicode.Scalar>: Int]) -> Int {
        if let n = numbering[line] { return n }
        let n = numbering.count
        numbering[line] = n
        return n
    }

    private static func span(of lineRange: Range<Int>, in lines: [Range<Int>], base: Int, end: Int) -> Range<Int> {
        let lower = lineRange.lowerBound < lines.count ? lines[lineRange.lowerBound].lowerBound : end
        let upper = lineRange.isEmpty ? lower : lines[lineRange.upperBound - 1].upperBound
        return lower..<upper
    }
}
