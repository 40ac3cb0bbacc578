/// Chooses, among the many edit scripts that turn one stretch of text into another, the one that
/// says what the person did (protocol/decisions/edit-intent.md).
///
/// A shortest edit script is not unique, and the one Myers' algorithm picks happily reuses
/// characters of neighbouring words: typing `them ` before `then` diffs as inserting `m the`
/// inside `then`. Merged with a concurrent removal of `then`, that garbles the typed word. The
/// rules, applied to the character hunks of one changed region:
///
/// 1. Hunks separated only by word characters (letters, digits, `_`) are one hunk: a word is
///    changed as a whole, never rebuilt from kept letters.
/// 2. A hunk that both removes and inserts (a replacement) grows to whole words: the letters of
///    the words it touches are removed and inserted again, so the new word is one insertion.
/// 3. A pure insertion or pure removal (typing, deleting) stays character-precise, but where
///    it could stand at several places giving the same text, it goes where the editor's cursor
///    says it was typed (an insertion ending at the cursor, or starting at it, or ending just
///    after it as Vim's cursor does after a paste; a removal at the cursor) and otherwise at
///    the best boundary: text ends, then line breaks, then spaces next to words, then
///    punctuation, never inside a word when a boundary is possible; among equally good places,
///    one where the moved text holds whole bracket pairs and quotes (`<A16>eers`, not
///    `A16>eers<`), so no token is cut in two; remaining ties go to the rightmost.
/// 4. Inside a word, a pure insertion or removal is only typing when something says so: when
///    the editor's cursor is where rule 3 would put it, or when nothing says otherwise (no
///    cursor sent). Where the editor sent its cursor and the edit is not at it, or where the
///    editor itself said it replaced a stretch (`replacing`: a range change with text), the
///    word is replaced whole as in rule 2: `th2q` -> `th29q` is a new word, not `9` typed in.
/// 0. Before the rules below: insertions (or removals) with kept text between them that one
///    insertion (or removal) of the same length also explains become that one edit. Myers'
///    algorithm splits a typed `f(b71) ` before `f(f26)` into `b71) ` and `(f` around the kept
///    `f`; rule 1 would then make that a replacement of `f26`, re-typing the other person's token
///    and giving its `f(` to the typed one. One insertion keeps every old character's identity.
/// 5. A replacement that changes the only word of a token (a run between spaces or line
///    breaks) takes the token's punctuation too: `<A1>` -> `<B1>` replaces `<A1>` whole, so a
///    concurrent replacement of the same token by `<C1>` leaves `<C1><B1>`, both intact,
///    instead of `<C1B1>`. Where the token holds other words (`f(x)`, `self.foo.bar(x)`), the
///    punctuation stays: it is where the others' typing is anchored (`f(x, w)` typed at once
///    with `x` -> `z` must stay inside the brackets).
///
/// Guarantees: the hunks stay sorted and disjoint, and still turn `old` into `new`; nothing here
/// costs more than linear time in the region.
enum EditAlignment {
    typealias Scalar = Unicode.Scalar

    /// Aligns `hunks` (as `MyersDiff.hunks(old, new)` returns them) by the rules above.
    /// `cursor`, when known, is the editor's cursor as an index into `new`.
    /// `replacing`: the editor said it replaced this stretch (a range change with both old
    /// characters and new text), so no word in it is rebuilt from kept letters (rule 4).
    static func align(_ hunks: [MyersDiff.Hunk], old: ArraySlice<Scalar>, new: ArraySlice<Scalar>, cursor: Int?,
                      replacing: Bool = false) -> [MyersDiff.Hunk] {
        guard !hunks.isEmpty else { return hunks }
        var result = joinExplainedByOne(hunks, old: old, new: new)
        var changed = true
        while changed {
            changed = false
            result = mergeAcrossWords(result, old: old)
            let widened = result.map { widenToWords($0, old: old, new: new, evenIfPure: replacing) }
            if widened != result { changed = true; result = widened }
            result = mergeTouching(result)
        }
        var typedInsideWords = false
        for i in result.indices where result[i].old.isEmpty || result[i].new.isEmpty {
            let lower = i > 0 ? result[i - 1] : nil
            let upper = i + 1 < result.count ? result[i + 1] : nil
            let (placed, atCursor) = slide(result[i], between: lower, and: upper, old: old, new: new, cursor: cursor)
            result[i] = placed
            if cursor != nil, !atCursor, isInsideWord(placed, old: old) {
                result[i] = widenToWords(placed, old: old, new: new, evenIfPure: true)
                typedInsideWords = true
            }
        }
        return typedInsideWords ? mergeTouching(mergeAcrossWords(result, old: old)) : result
    }

    /// The longest stretch of kept text rule 0 looks across (it compares the whole stretch).
    static let joinReach = 256

    /// Rule 0: neighbouring pure insertions (or pure removals) that a single insertion (removal)
    /// of the same characters explains become that one hunk, placed as early as it can stand;
    /// `slide` then moves it to the best boundary.
    /// - Complexity: O(hunks × `joinReach`)
    private static func joinExplainedByOne(_ hunks: [MyersDiff.Hunk], old: ArraySlice<Scalar>, new: ArraySlice<Scalar>) -> [MyersDiff.Hunk] {
        var result: [MyersDiff.Hunk] = []
        for hunk in hunks {
            if let last = result.last, let joined = joined(last, hunk, old: old, new: new) {
                result[result.count - 1] = joined
            } else {
                result.append(hunk)
            }
        }
        return result
    }

    /// `first` and `second` (in order, both insertions or both removals) as one hunk, or nil.
    private static func joined(_ first: MyersDiff.Hunk, _ second: MyersDiff.Hunk, old: ArraySlice<Scalar>,
                               new: ArraySlice<Scalar>) -> MyersDiff.Hunk? {
        let inserting = first.old.isEmpty && second.old.isEmpty && !first.new.isEmpty && !second.new.isEmpty
        let removing = first.new.isEmpty && second.new.isEmpty && !first.old.isEmpty && !second.old.isEmpty
        guard inserting || removing else { return nil }
        let oldSpan = first.old.lowerBound..<second.old.upperBound
        let newSpan = first.new.lowerBound..<second.new.upperBound
        // The longer side holds the shorter (the kept text) as a prefix and a suffix that together cover it.
        let (long, short) = inserting ? (new[newSpan], old[oldSpan]) : (old[oldSpan], new[newSpan])
        guard short.count <= joinReach else { return nil }
        var prefix = 0
        while prefix < short.count, long[long.startIndex + prefix] == short[short.startIndex + prefix] { prefix += 1 }
        var suffix = 0
        while suffix < short.count, long[long.endIndex - 1 - suffix] == short[short.endIndex - 1 - suffix] { suffix += 1 }
        guard prefix + suffix >= short.count else { return nil }
        let added = long.count - short.count
        return inserting
            ? MyersDiff.Hunk(old: (oldSpan.lowerBound + prefix)..<(oldSpan.lowerBound + prefix),
                             new: (newSpan.lowerBound + prefix)..<(newSpan.lowerBound + prefix + added))
            : MyersDiff.Hunk(old: (oldSpan.lowerBound + prefix)..<(oldSpan.lowerBound + prefix + added),
                             new: (newSpan.lowerBound + prefix)..<(newSpan.lowerBound + prefix))
    }

    /// Whether a pure insertion or removal has word characters right before and after it.
    private static func isInsideWord(_ hunk: MyersDiff.Hunk, old: ArraySlice<Scalar>) -> Bool {
        hunk.old.lowerBound > old.startIndex && hunk.old.upperBound < old.endIndex
            && isWord(old[hunk.old.lowerBound - 1]) && isWord(old[hunk.old.upperBound])
    }

    /// Neither a word character nor white space: what tokens like `<A1>`, `f(x)`, `"s"` wrap words in.
    static func isPunctuation(_ scalar: Scalar) -> Bool {
        !isWord(scalar) && !scalar.properties.isWhitespace
    }

    static func isWord(_ scalar: Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    /// Rule 1: hunks with only word characters between them become one.
    private static func mergeAcrossWords(_ hunks: [MyersDiff.Hunk], old: ArraySlice<Scalar>) -> [MyersDiff.Hunk] {
        var result: [MyersDiff.Hunk] = []
        for hunk in hunks {
            if let last = result.last, old[last.old.upperBound..<hunk.old.lowerBound].allSatisfy(isWord) {
                result[result.count - 1] = MyersDiff.Hunk(old: last.old.lowerBound..<hunk.old.upperBound,
                                                          new: last.new.lowerBound..<hunk.new.upperBound)
            } else {
                result.append(hunk)
            }
        }
        return result
    }

    /// Hunks that now touch or overlap become one.
    private static func mergeTouching(_ hunks: [MyersDiff.Hunk]) -> [MyersDiff.Hunk] {
        var result: [MyersDiff.Hunk] = []
        for hunk in hunks {
            if let last = result.last, last.old.upperBound >= hunk.old.lowerBound {
                result[result.count - 1] = MyersDiff.Hunk(old: last.old.lowerBound..<max(last.old.upperBound, hunk.old.upperBound),
                                                          new: last.new.lowerBound..<max(last.new.upperBound, hunk.new.upperBound))
            } else {
                result.append(hunk)
            }
        }
        return result
    }

    /// Rule 2: a replacement takes in the rest of the words it touches (the kept letters before
    /// and after it, which are the same on both sides).
    /// `evenIfPure`: a pure insertion or removal grows too (rule 4).
    private static func widenToWords(_ hunk: MyersDiff.Hunk, old: ArraySlice<Scalar>, new: ArraySlice<Scalar>,
                                     evenIfPure: Bool = false) -> MyersDiff.Hunk {
        guard evenIfPure || (!hunk.old.isEmpty && !hunk.new.isEmpty) else { return hunk }
        var oLow = hunk.old.lowerBound, nLow = hunk.new.lowerBound
        var oHigh = hunk.old.upperBound, nHigh = hunk.new.upperBound
        let startsWithWord = (!hunk.old.isEmpty && isWord(old[oLow])) || (!hunk.new.isEmpty && isWord(new[nLow]))
        let endsWithWord = (!hunk.old.isEmpty && isWord(old[oHigh - 1])) || (!hunk.new.isEmpty && isWord(new[nHigh - 1]))
        if startsWithWord {
            while oLow > old.startIndex, nLow > new.startIndex, isWord(old[oLow - 1]) { oLow -= 1; nLow -= 1 }
        }
        if endsWithWord {
            while oHigh < old.endIndex, nHigh < new.endIndex, isWord(old[oHigh]) { oHigh += 1; nHigh += 1 }
        }
        // Rule 5: the punctuation around a changed word goes with it when it makes the whole token.
        if startsWithWord || endsWithWord {
            var pLow = oLow, pnLow = nLow, pHigh = oHigh, pnHigh = nHigh
            while pLow > old.startIndex, pnLow > new.startIndex, isPunctuation(old[pLow - 1]), old[pLow - 1] == new[pnLow - 1] { pLow -= 1; pnLow -= 1 }
            while pHigh < old.endIndex, pnHigh < new.endIndex, isPunctuation(old[pHigh]), old[pHigh] == new[pnHigh] { pHigh += 1; pnHigh += 1 }
            let tokenStarts = pLow == old.startIndex || old[pLow - 1].properties.isWhitespace
            let tokenEnds = pHigh == old.endIndex || old[pHigh].properties.isWhitespace
            let widened = (pLow, pHigh) != (oLow, oHigh)
            let wordsInside = old[pLow..<pHigh].contains(where: isWord) || new[pnLow..<pnHigh].contains(where: isWord)
            if widened, tokenStarts, tokenEnds, wordsInside, !old[oLow..<oHigh].contains(where: \.properties.isWhitespace) {
                (oLow, nLow, oHigh, nHigh) = (pLow, pnLow, pHigh, pnHigh)
            }
        }
        return MyersDiff.Hunk(old: oLow..<oHigh, new: nLow..<nHigh)
    }

    /// Rule 3: the best place for a pure insertion or removal among those that give the same text,
    /// without crossing its neighbours, and whether the cursor put it there.
    private static func slide(_ hunk: MyersDiff.Hunk, between lower: MyersDiff.Hunk?, and upper: MyersDiff.Hunk?,
                              old: ArraySlice<Scalar>, new: ArraySlice<Scalar>, cursor: Int?) -> (MyersDiff.Hunk, atCursor: Bool) {
        let inserting = hunk.old.isEmpty
        // The sequence the hunk's content lives in, and where it may move within it.
        let content = inserting ? new : old
        let span = inserting ? hunk.new : hunk.old
        let other = inserting ? hunk.old.lowerBound : hunk.new.lowerBound
        let floor = inserting ? (lower?.new.upperBound ?? new.startIndex) : (lower?.old.upperBound ?? old.startIndex)
        let ceiling = inserting ? (upper?.new.lowerBound ?? new.endIndex) : (upper?.old.lowerBound ?? old.endIndex)
        let length = span.count
        // Shift s moves the hunk s places: possible while the character it moves over repeats.
        var lowest = 0, highest = 0
        while span.lowerBound + lowest > floor, content[span.lowerBound + lowest - 1] == content[span.upperBound + lowest - 1] { lowest -= 1 }
        while span.upperBound + highest < ceiling, content[span.lowerBound + highest] == content[span.upperBound + highest] { highest += 1 }
        func shifted(_ s: Int) -> MyersDiff.Hunk {
            inserting ? MyersDiff.Hunk(old: (other + s)..<(other + s), new: (span.lowerBound + s)..<(span.upperBound + s))
                      : MyersDiff.Hunk(old: (span.lowerBound + s)..<(span.upperBound + s), new: (other + s)..<(other + s))
        }
        if let cursor {
            // An insertion ends at the cursor (or starts at it, or ends just after it); a removal
            // leaves the cursor where it was.
            let wanted: [(MyersDiff.Hunk) -> Bool] = inserting
                ? [{ $0.new.upperBound == cursor }, { $0.new.lowerBound == cursor }, { $0.new.upperBound == cursor + 1 }]
                : [{ $0.new.lowerBound == cursor }]
            for test in wanted {
                if let s = (lowest...highest).last(where: { test(shifted($0)) }) { return (shifted(s), true) }
            }
        }
        guard lowest < highest else { return (hunk, false) }
        var best = lowest, bestScore = Int.min
        for s in lowest...highest {
            let start = span.lowerBound + s, end = start + length
            let before: Scalar? = start > content.startIndex ? content[start - 1] : nil
            let after: Scalar? = end < content.endIndex ? content[end] : nil
            let score = 2 * (edgeScore(before, content[start]) + edgeScore(content[end - 1], after))
                + (isBalanced(content[start..<end]) ? 1 : 0)
            if score >= bestScore { best = s; bestScore = score }
        }
        return (shifted(best), false)
    }

    /// Whether `text` holds its brackets in pairs, opened before they close, and its quotes in
    /// pairs: moved text that cuts no token in two.
    /// - Complexity: O(text)
    static func isBalanced(_ text: ArraySlice<Scalar>) -> Bool {
        var depth = [0, 0, 0, 0]
        var quotes = [0, 0, 0]
        for scalar in text {
            switch scalar {
            case "(": depth[0] += 1
            case ")": depth[0] -= 1
            case "[": depth[1] += 1
            case "]": depth[1] -= 1
            case "{": depth[2] += 1
            case "}": depth[2] -= 1
            case "<": depth[3] += 1
            case ">": depth[3] -= 1
            case "\"": quotes[0] += 1
            case "'": quotes[1] += 1
            case "`": quotes[2] += 1
            default: continue
            }
            if depth.contains(where: { $0 < 0 }) { return false }
        }
        return depth.allSatisfy { $0 == 0 } && quotes.allSatisfy { $0 % 2 == 0 }
    }

    /// How good a boundary between `a` and `b` is to start or end an edit at (higher is better).
    static func edgeScore(_ a: Scalar?, _ b: Scalar?) -> Int {
        guard let a, let b else { return 6 }
        if a == "\n" || b == "\n" { return 5 }
        let aWord = isWord(a), bWord = isWord(b)
        if a.properties.isWhitespace || b.properties.isWhitespace { return aWord || bWord ? 3 : 2 }
        if aWord && bWord { return 0 }
        return 1
    }
}
