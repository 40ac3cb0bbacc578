import ReplicatingTypes

/// Figures for a War-and-Peace-sized document (about 3 MB): open, a keystroke in the middle, a
/// position lookup, and reducing a whole-text resend with one changed line to minimal edits.
struct DocumentBenchmark {
    let repetitions: Int

    struct Result {
        var bytes = 0
        var lines = 0
        var openSeconds = 0.0
        var keystrokeSeconds = 0.0
        var lookupSeconds = 0.0
        var diffSeconds = 0.0
        var diffEdits = 0
    }

    static func makeText() -> String {
        let paragraph = "“Well, Prince, so Genoa and Lucca are now just family estates of the Buonapartes.” — a line of prose long enough to wrap.\n"
        return String(repeating: paragraph, count: 3_000_000 / paragraph.utf8.count)
    }

    func run() -> Result {
        var result = Result()
        let source = Self.makeText()
        result.bytes = source.utf8.count
        var text = ReplicatingText(replica: ReplicaID(1))
        result.openSeconds = Measure.median(repetitions) { text = ReplicatingText(source, replica: ReplicaID(1)) }
        result.lines = text.lineCount
        let middle = TextPosition(line: text.lineCount / 2, character: 40)
        var keystrokes = 0
        result.keystrokeSeconds = Measure.median(repetitions) {
            // Typed where the editor's cursor is: UTF-16 position to offset, then the insertion.
            if let offset = try? text.offset(of: middle, in: .utf16) { text.replace(offset..<offset, with: ["x"]) }
            keystrokes += 1
        }
        result.lookupSeconds = Measure.median(repetitions) { _ = text.position(ofOffset: text.count / 3, in: .utf16) }
        let old = Array(text.string.unicodeScalars)
        var new = old
        new.insert(contentsOf: "!!".unicodeScalars, at: old.count / 2)
        var edits: [TextEdit] = []
        result.diffSeconds = Measure.median(repetitions) { edits = TextDiff.edits(from: old, to: new) }
        result.diffEdits = edits.count
        return result
    }
}
