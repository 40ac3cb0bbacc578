/// Myers' O((N+M)·D) shortest edit script between two sequences.
///
/// Guarantees: the hunks are sorted, disjoint, and turn `old` into `new` when each `old` range is
/// replaced by its `new` range; with at most `maxEdits` differences the script is minimal, beyond
/// that the differing middle is one replacement (still correct, bounded in time and memory), or,
/// from `exactHunks`, nil, so that the caller can split it its own way (`TextDiff` by lines).
enum MyersDiff {
    struct Hunk: Equatable {
        var old: Range<Int>
        var new: Range<Int>
    }

    static func hunks<T: Equatable>(_ old: ArraySlice<T>, _ new: ArraySlice<T>, maxEdits: Int = 1024) -> [Hunk] {
        exactHunks(old, new, maxEdits: maxEdits) ?? [commonPrefixAndSuffix(old, new)]
    }

    /// Like `hunks`, but among the shortest scripts it prefers one that keeps the elements that
    /// stand at the same place in the differing middle of both: `[c, b, a]` -> `[a, b, c]` keeps
    /// `b` (`hunks` keeps `a`). Used on lines, so a `:sort` or a line move leaves a line that did
    /// not move where it was, with what others typed in it (edit-intent.md, rule 7).
    /// - Complexity: that of `hunks`, plus one more run split at those elements.
    static func hunksKeepingInPlace<T: Equatable>(_ old: ArraySlice<T>, _ new: ArraySlice<T>, maxEdits: Int = 1024) -> [Hunk] {
        let plain = hunks(old, new, maxEdits: maxEdits)
        guard let first = plain.first, let last = plain.last else { return plain }
        // The differing middle: `hunks` always reports it from its first to its last hunk.
        let oStart = first.old.lowerBound, nStart = first.new.lowerBound
        let oEnd = last.old.upperBound, nEnd = last.new.upperBound
        let inPlace = (0..<Swift.min(oEnd - oStart, nEnd - nStart)).filter { old[oStart + $0] == new[nStart + $0] }
        guard !inPlace.isEmpty else { return plain }
        var result: [Hunk] = []
        var o = oStart, n = nStart
        for k in inPlace + [Swift.max(oEnd - oStart, nEnd - nStart)] {
            let oUpper = Swift.min(oStart + k, oEnd), nUpper = Swift.min(nStart + k, nEnd)
            guard let piece = exactHunks(old[o..<oUpper], new[n..<nUpper], maxEdits: maxEdits) else { return plain }
            result += piece
            (o, n) = (oUpper + 1, nUpper + 1)
        }
        func cost(_ hunks: [Hunk]) -> Int { hunks.reduce(0) { $0 + $1.old.count + $1.new.count } }
        return cost(result) <= cost(plain) ? result : plain
    }

    /// The differing middle of `old` and `new`, once their common prefix and suffix are skipped.
    /// - Complexity: O(n + m).
    static func commonPrefixAndSuffix<T: Equatable>(_ old: ArraySlice<T>, _ new: ArraySlice<T>) -> Hunk {
        var oStart = old.startIndex, nStart = new.startIndex
        var oEnd = old.endIndex, nEnd = new.endIndex
        while oStart < oEnd, nStart < nEnd, old[oStart] == new[nStart] { oStart += 1; nStart += 1 }
        while oEnd > oStart, nEnd > nStart, old[oEnd - 1] == new[nEnd - 1] { oEnd -= 1; nEnd -= 1 }
        return Hunk(old: oStart..<oEnd, new: nStart..<nEnd)
    }

    /// The minimal hunks, or nil when there are more than `maxEdits` differences (the caller
    /// then chooses how to split the differing middle).
    /// - Complexity: O((n + m) · min(D, maxEdits)) time, O(min(D, maxEdits)²) memory.
    static func exactHunks<T: Equatable>(_ old: ArraySlice<T>, _ new: ArraySlice<T>, maxEdits: Int = 1024) -> [Hunk]? {
        var oStart = old.startIndex, nStart = new.startIndex
        var oEnd = old.endIndex, nEnd = new.endIndex
        while oStart < oEnd, nStart < nEnd, old[oStart] == new[nStart] { oStart += 1; nStart += 1 }
        while oEnd > oStart, nEnd > nStart, old[oEnd - 1] == new[nEnd - 1] { oEnd -= 1; nEnd -= 1 }
        if oStart == oEnd && nStart == nEnd { return [] }
        if oStart == oEnd || nStart == nEnd { return [Hunk(old: oStart..<oEnd, new: nStart..<nEnd)] }
        let a = old[oStart..<oEnd], b = new[nStart..<nEnd]
        let n = a.count, m = b.count
        let limit = Swift.min(n + m, maxEdits)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)
        var trace: [[Int]] = []
        var found = false
        outer: for d in 0...limit {
            // Only diagonals -d-1...d+1 can be read when backtracking from round d.
            trace.append(Array(v[(offset - d - 1)...(offset + d + 1)]))
            for k in stride(from: -d, through: d, by: 2) {
                var x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1] : v[offset + k - 1] + 1
                var y = x - k
                while x < n, y < m, a[a.startIndex + x] == b[b.startIndex + y] { x += 1; y += 1 }
                v[offset + k] = x
                if x >= n, y >= m { found = true; break outer }
            }
        }
        guard found else { return nil }
        // Walk back through the trace, collecting the edits as hunks (in reverse).
        var hunks: [Hunk] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 1, by: -1) {
            let vd = trace[d]
            let base = d + 1 // vd[base + k] is v[k]
            let k = x - y
            let prevK = (k == -d || (k != d && vd[base + k - 1] < vd[base + k + 1])) ? k + 1 : k - 1
            let prevX = vd[base + prevK]
            let prevY = prevX - prevK
            while x > prevX, y > prevY { x -= 1; y -= 1 }
            // One step: an insertion (x unchanged) or a deletion (y unchanged).
            let edit = Hunk(old: (oStart + prevX)..<(oStart + x), new: (nStart + prevY)..<(nStart + y))
            if let last = hunks.last, last.old.lowerBound == edit.old.upperBound, last.new.lowerBound == edit.new.upperBound {
                hunks[hunks.count - 1] = Hunk(old: edit.old.lowerBound..<last.old.upperBound, new: edit.new.lowerBound..<last.new.upperBound)
            } else {
                hunks.append(edit)
            }
            x = prevX
            y = prevY
        }
        return hunks.reversed()
    }
}
