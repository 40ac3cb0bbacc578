/// A three-way merge of plain text: the changes one side made to a common `base` carried over to
/// the other side's text, for an editor that kept typing while it had lost the daemon.
///
/// Guarantees: the edits are sorted, disjoint, refer to offsets (in scalars) of `current`, and
/// never remove a character `current` added. Both sides' changes are found by `TextDiff`, so a
/// word typed on either side is one insertion, never rebuilt from letters of its neighbours.
/// The same change made on both sides (an edit the daemon applied but whose reply the editor
/// never read) counts once; a change that contains the other side's change at the same place
/// adds only what it has more. Otherwise, where both sides changed the same stretch of `base`
/// (or inserted at the same point), `current`'s version is kept and the other side's
/// replacement follows it: nothing typed on either side is lost, at worst both are shown.
public enum TextMerge {
    /// Edits to `current` that add what `base` -> `incoming` changed.
    public static func edits(base: [Unicode.Scalar], current: [Unicode.Scalar], incoming: [Unicode.Scalar]) -> [TextEdit] {
        let theirs = TextDiff.edits(from: base, to: current)
        let mine = TextDiff.edits(from: base, to: incoming)
        if theirs.isEmpty { return mine }
        var result: [TextEdit] = []
        var next = 0          // the first of `theirs` not wholly before the edit at hand
        var shift = 0         // how much `theirs` before it moved base offsets
        for edit in mine {
            while next < theirs.count, isBefore(theirs[next], edit) {
                shift += theirs[next].replacement.count - theirs[next].range.count
                next += 1
            }
            // `theirs` edits from `next` on that clash with this one.
            var clashEnd = next
            var clashShift = shift
            while clashEnd < theirs.count, clashes(theirs[clashEnd], edit) {
                clashShift += theirs[clashEnd].replacement.count - theirs[clashEnd].range.count
                clashEnd += 1
            }
            let merged: TextEdit
            if clashEnd == next {
                merged = TextEdit(range: (edit.range.lowerBound + shift)..<(edit.range.upperBound + shift), replacement: edit.replacement)
            } else if clashEnd == next + 1, theirs[next].range == edit.range,
                      let k = firstIndex(of: theirs[next].replacement, in: edit.replacement) {
                // The same change on both sides, perhaps with more around it: add only the more.
                let start = theirs[next].range.lowerBound + shift
                let end = start + theirs[next].replacement.count
                let before = Array(edit.replacement[..<k]), after = Array(edit.replacement[(k + theirs[next].replacement.count)...])
                if !before.isEmpty { append(TextEdit(range: start..<start, replacement: before), to: &result) }
                if !after.isEmpty { append(TextEdit(range: end..<end, replacement: after), to: &result) }
                continue
            } else {
                // Keep their version of the clashing stretch and put ours right after it.
                let at = theirs[clashEnd - 1].range.upperBound + clashShift
                merged = TextEdit(range: at..<at, replacement: edit.replacement)
            }
            append(merged, to: &result)
        }
        return result
    }

    private static func append(_ edit: TextEdit, to result: inout [TextEdit]) {
        if let last = result.last, last.range.upperBound == edit.range.lowerBound, edit.range.isEmpty {
            result[result.count - 1].replacement += edit.replacement
        } else if !(edit.range.isEmpty && edit.replacement.isEmpty) {
            result.append(edit)
        }
    }

    /// Where `part` stands in `whole` when it starts or ends it (an empty part stands at 0).
    /// - Complexity: O(part), so a pasted megabyte on both sides stays linear.
    private static func firstIndex(of part: [Unicode.Scalar], in whole: [Unicode.Scalar]) -> Int? {
        guard part.count <= whole.count else { return nil }
        if whole.starts(with: part) { return 0 }
        if whole[(whole.count - part.count)...].elementsEqual(part) { return whole.count - part.count }
        return nil
    }

    /// Whether `theirs` lies wholly before `mine` in base (an insertion at the very point where
    /// `mine` inserts too is a clash, not before).
    private static func isBefore(_ theirs: TextEdit, _ mine: TextEdit) -> Bool {
        if theirs.range.isEmpty && mine.range.isEmpty { return theirs.range.lowerBound < mine.range.lowerBound }
        return theirs.range.upperBound <= mine.range.lowerBound && !clashes(theirs, mine)
    }

    private static func clashes(_ theirs: TextEdit, _ mine: TextEdit) -> Bool {
        if theirs.range.isEmpty && mine.range.isEmpty { return theirs.range.lowerBound == mine.range.lowerBound }
        return theirs.range.lowerBound < mine.range.upperBound && mine.range.lowerBound < theirs.range.upperBound
    }
}
