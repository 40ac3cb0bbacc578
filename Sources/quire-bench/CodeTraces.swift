import EditingTraces

/// Code-shaped editing histories, generated deterministically (the same seed gives the same
/// patches on every machine): a file typed line by line with typos and backspaces, words
/// replaced, blocks indented and dedented, functions cut and pasted or duplicated, whole regions
/// deleted, and large changes undone. Every patch is one editor change (a keystroke, a
/// backspace, an autoindent, a cut, a paste, an undo), in the editing-traces format.
struct CodeTraces {
    enum Kind: String, CaseIterable {
        /// Writing a file from nothing: mostly typing (with typos), edits of words, some moves.
        case writing = "code-writing"
        /// Restructuring a pasted file: indentation, cut and paste, deletions and undo dominate.
        case refactoring = "code-refactoring"
    }

    /// What a history looks like, printed next to its figures.
    struct Shape {
        var edits = 0
        var paragraphs = 0
        var characters = 0
        var largestDeletion = 0
        var removedCharacters = 0
        var meanLineLength: Double { paragraphs == 0 ? 0 : Double(characters) / Double(paragraphs) }
    }

    /// Edits in a history at scale 1; scale s has s times as many.
    static let baseEdits = 25_000

    static func make(_ kind: Kind, scale: Int) -> (EditingTrace, Shape) {
        var generator = CodeTraces(seed: kind == .writing ? 0x5eed_c0de : 0x5eed_ba5e, scale: scale)
        let target = baseEdits * scale
        if kind == .refactoring { generator.pasteFile() }
        while generator.patches.count < target {
            switch kind {
            case .writing: generator.writingStep()
            case .refactoring: generator.refactoringStep()
            }
        }
        let text = String(String.UnicodeScalarView(generator.lines.joined()))
        var shape = Shape()
        shape.edits = generator.patches.count
        shape.paragraphs = generator.lines.count
        shape.characters = generator.characters
        for patch in generator.patches where patch.removeCount > 0 {
            shape.largestDeletion = max(shape.largestDeletion, patch.removeCount)
            shape.removedCharacters += patch.removeCount
        }
        return (EditingTrace(name: "\(kind.rawValue) \(scale)x", endContent: text, patches: generator.patches), shape)
    }

    // MARK: The document being edited

    /// Lines of the text, each with its line break.
    private var lines: [[Unicode.Scalar]] = []
    private var characters = 0
    private(set) var patches: [EditingTrace.Patch] = []
    private var random: SeededRandom
    /// The document grows towards this many characters, then deletions balance typing.
    private let targetCharacters: Int
    /// Where the person is working (a line index), so typing has locality.
    private var cursor = 0
    /// The last large change, which the next step may undo.
    private var undoable: Undo?

    private enum Undo {
        /// `lines` were removed at line `at`.
        case removed(at: Int, lines: [[Unicode.Scalar]])
        /// `count` lines were inserted at line `at`.
        case inserted(at: Int, count: Int)
        /// `count` lines moved from line `from` (before the cut) to line `to` (after it).
        case moved(from: Int, to: Int, count: Int)
    }

    private init(seed: UInt64, scale: Int) {
        random = SeededRandom(seed: seed)
        // Files grow with a longer history, but more slowly than it: sqrt(scale).
        var root = 1
        while (root + 1) * (root + 1) <= scale { root += 1 }
        targetCharacters = 24_000 * root
    }

    private func offset(ofLine line: Int) -> Int {
        var offset = 0
        for i in 0..<line { offset += lines[i].count }
        return offset
    }

    private mutating func emitInsert(_ text: [Unicode.Scalar], at position: Int) {
        patches.append(EditingTrace.Patch(position: position, removeCount: 0, insert: text))
        characters += text.count
    }

    private mutating func emitRemove(_ count: Int, at position: Int) {
        guard count > 0 else { return }
        patches.append(EditingTrace.Patch(position: position, removeCount: count, insert: []))
        characters -= count
    }

    // MARK: Steps

    private mutating func writingStep() {
        if characters > targetCharacters && random.chance(0.3) { deleteRegion(); return }
        switch random.below(100) {
        case 0..<22: typeFunction()
        case 22..<45: typeLines()
        case 45..<80: replaceWord()
        case 80..<86: reindent()
        case 86..<90: deleteRegion()
        case 90..<94: cutAndPaste()
        case 94..<96: duplicate()
        default: undo()
        }
    }

    private mutating func refactoringStep() {
        if characters > targetCharacters && random.chance(0.3) { deleteRegion(); return }
        // Deletions take whole regions and typing adds little: below the file's size, a region
        // goes only when a pasted one came in.
        let small = characters < targetCharacters * 3 / 4
        switch random.below(100) {
        case 0..<6: typeFunction()
        case 6..<22: typeLines()
        case 22..<50: replaceWord()
        case 50..<68: reindent()
        case 68..<76: if small { duplicate() } else { deleteRegion() }
        case 76..<86: cutAndPaste()
        case 86..<91: duplicate()
        default: undo()
        }
    }

    /// The whole starting file pasted at once.
    mutating func pasteFile() {
        var block: [[Unicode.Scalar]] = []
        var size = 0
        while size < targetCharacters {
            let function = makeFunction(indent: random.chance(0.3) ? 4 : 0)
            size += function.reduce(0) { $0 + $1.count }
            block += function
        }
        emitInsert(Array(block.joined()), at: 0)
        lines = block
    }

    /// A new function typed after the function the cursor is in.
    private mutating func typeFunction() {
        var at = lines.isEmpty ? 0 : min(cursor, lines.count)
        while at < lines.count && !(lines[at].count == 1) { at += 1 }   // after the next blank line
        if at < lines.count { at += 1 }
        let function = makeFunction(indent: random.chance(0.25) ? 4 : 0)
        type(function, at: at)
        undoable = random.chance(0.2) ? .inserted(at: at, count: function.count) : nil
    }

    /// A few statements typed into the body of an existing function.
    private mutating func typeLines() {
        guard !lines.isEmpty else { typeFunction(); return }
        let at = random.chance(0.7) ? min(lines.count, cursor + random.below(6)) : random.below(lines.count + 1)
        let indent = at < lines.count ? leadingSpaces(lines[at]) : 4
        let count = 1 + random.below(4)
        type((0..<count).map { _ in makeStatement(indent: max(indent, 4)) }, at: at)
        undoable = nil
    }

    /// `block` typed line by line at line `at`: autoindent in one change, then each character a
    /// keystroke, with typos typed and backspaced.
    private mutating func type(_ block: [[Unicode.Scalar]], at line: Int) {
        var position = offset(ofLine: line)
        for (i, text) in block.enumerated() {
            let indent = leadingSpaces(text)
            if indent > 0 { emitInsert(Array(text[..<indent]), at: position); position += indent }
            for scalar in text[indent...] {
                if scalar != "\n" && random.chance(0.04) {
                    let wrong = 1 + random.below(3)
                    for _ in 0..<wrong { emitInsert([Self.letters[random.below(Self.letters.count)]], at: position); position += 1 }
                    for _ in 0..<wrong { position -= 1; emitRemove(1, at: position) }
                }
                emitInsert([scalar], at: position)
                position += 1
            }
            lines.insert(text, at: line + i)
        }
        cursor = line + block.count
    }

    /// A word of a line replaced: selected and removed in one change, the new one typed.
    private mutating func replaceWord() {
        guard !lines.isEmpty else { typeFunction(); return }
        let line = random.chance(0.6) ? min(lines.count - 1, max(0, cursor - 3 + random.below(7))) : random.below(lines.count)
        let text = lines[line]
        // The words (runs of letters) of the line.
        var words: [Range<Int>] = []
        var start: Int?
        for (i, scalar) in text.enumerated() {
            let letter = scalar.properties.isAlphabetic
            if letter && start == nil { start = i }
            if !letter, let s = start { words.append(s..<i); start = nil }
        }
        guard !words.isEmpty else { cursor = line; return }
        let word = words[random.below(words.count)]
        let position = offset(ofLine: line) + word.lowerBound
        emitRemove(word.count, at: position)
        let replacement = Array(Self.identifiers[random.below(Self.identifiers.count)].unicodeScalars)
        for (i, scalar) in replacement.enumerated() { emitInsert([scalar], at: position + i) }
        lines[line].replaceSubrange(word, with: replacement)
        cursor = line
        undoable = nil
    }

    /// A block of lines indented or dedented by four spaces, one change per line.
    private mutating func reindent() {
        guard lines.count > 4 else { typeFunction(); return }
        let first = random.below(lines.count - 2)
        let count = min(lines.count - first, 3 + random.below(20))
        let dedent = random.chance(0.5)
        var position = offset(ofLine: first)
        for line in first..<(first + count) {
            if dedent {
                let remove = min(4, leadingSpaces(lines[line]))
                emitRemove(remove, at: position)
                lines[line].removeFirst(remove)
            } else if lines[line].count > 1 {
                emitInsert(Array("    ".unicodeScalars), at: position)
                lines[line].insert(contentsOf: "    ".unicodeScalars, at: 0)
            }
            position += lines[line].count
        }
        cursor = first
        undoable = nil
    }

    /// A whole region (tens of lines) deleted in one change.
    private mutating func deleteRegion() {
        guard lines.count > 10 else { typeFunction(); return }
        let count = min(lines.count / 2, 10 + random.below(70))
        let first = random.below(lines.count - count + 1)
        let removed = Array(lines[first..<(first + count)])
        emitRemove(removed.reduce(0) { $0 + $1.count }, at: offset(ofLine: first))
        lines.removeSubrange(first..<(first + count))
        cursor = first
        undoable = .removed(at: first, lines: removed)
    }

    /// A function (a run of lines) cut and pasted elsewhere.
    private mutating func cutAndPaste() {
        guard lines.count > 20 else { typeFunction(); return }
        let count = min(lines.count / 2, 5 + random.below(25))
        let first = random.below(lines.count - count + 1)
        let block = Array(lines[first..<(first + count)])
        emitRemove(block.reduce(0) { $0 + $1.count }, at: offset(ofLine: first))
        lines.removeSubrange(first..<(first + count))
        let to = random.below(lines.count + 1)
        emitInsert(Array(block.joined()), at: offset(ofLine: to))
        lines.insert(contentsOf: block, at: to)
        cursor = to
        undoable = .moved(from: first, to: to, count: count)
    }

    /// A function copied and pasted elsewhere.
    private mutating func duplicate() {
        guard lines.count > 20 else { typeFunction(); return }
        let count = min(lines.count / 2, 5 + random.below(20))
        let first = random.below(lines.count - count + 1)
        let block = Array(lines[first..<(first + count)])
        let to = random.below(lines.count + 1)
        emitInsert(Array(block.joined()), at: offset(ofLine: to))
        lines.insert(contentsOf: block, at: to)
        cursor = to
        undoable = .inserted(at: to, count: count)
    }

    /// The last large change undone in one change (two for a move).
    private mutating func undo() {
        guard let last = undoable else { replaceWord(); return }
        undoable = nil
        switch last {
        case .removed(let at, let removed):
            emitInsert(Array(removed.joined()), at: offset(ofLine: at))
            lines.insert(contentsOf: removed, at: at)
        case .inserted(let at, let count):
            emitRemove(lines[at..<(at + count)].reduce(0) { $0 + $1.count }, at: offset(ofLine: at))
            lines.removeSubrange(at..<(at + count))
        case .moved(let from, let to, let count):
            let block = Array(lines[to..<(to + count)])
            emitRemove(block.reduce(0) { $0 + $1.count }, at: offset(ofLine: to))
            lines.removeSubrange(to..<(to + count))
            emitInsert(Array(block.joined()), at: offset(ofLine: from))
            lines.insert(contentsOf: block, at: from)
        }
    }

    // MARK: Code

    private func leadingSpaces(_ line: [Unicode.Scalar]) -> Int {
        var n = 0
        while n < line.count && line[n] == " " { n += 1 }
        return n
    }

    static let letters = Array("abcdefghijklmnopqrstuvwxyz".unicodeScalars)
    static let identifiers = ["count", "index", "offset", "buffer", "value", "result", "node", "leaf", "text", "line",
                              "range", "position", "element", "replica", "state", "next", "first", "last", "bytes", "id",
                              "storage", "document", "editor", "session", "view", "change", "edit", "operation"]
    static let types = ["Int", "String", "[UInt8]", "Bool", "Document", "Range<Int>", "ElementID", "[Operation]"]

    private mutating func word() -> String { Self.identifiers[random.below(Self.identifiers.count)] }

    /// One line of code (with its line break) at `indent`.
    private mutating func makeStatement(indent: Int) -> [Unicode.Scalar] {
        let pad = String(repeating: " ", count: indent)
        let text: String
        switch random.below(9) {
        case 0: text = "let \(word()) = \(word())(\(word()), \(random.below(100)))"
        case 1: text = "var \(word()): \(Self.types[random.below(Self.types.count)]) = \(random.below(10))"
        case 2: text = "\(word()).\(word())(\(word()))"
        case 3: text = "\(word()) += \(word()).count"
        case 4: text = "guard let \(word()) = \(word())[\(word())] else { return nil }"
        case 5: text = "// \(word()) \(word()) the \(word()) before \(word())"
        case 6: text = "return \(word()) + \(random.below(1000))"
        case 7: text = "\(word()) = \(word()) ?? \(word())"
        default: text = "if \(word()) > \(word()) { \(word()) = \(word()) }"
        }
        return Array((pad + text + "\n").unicodeScalars)
    }

    /// A function: a signature, a body (sometimes with a nested block), a closing brace and a
    /// blank line.
    private mutating func makeFunction(indent: Int) -> [[Unicode.Scalar]] {
        let pad = String(repeating: " ", count: indent)
        var function = [Array("\(pad)func \(word())(\(word()): \(Self.types[random.below(Self.types.count)])) -> \(Self.types[random.below(Self.types.count)]) {\n".unicodeScalars)]
        for _ in 0..<(2 + random.below(10)) {
            if random.chance(0.15) {
                function.append(Array("\(pad)    for \(word()) in \(word()) {\n".unicodeScalars))
                for _ in 0..<(1 + random.below(4)) { function.append(makeStatement(indent: indent + 8)) }
                function.append(Array("\(pad)    }\n".unicodeScalars))
            } else {
                function.append(makeStatement(indent: indent + 4))
            }
        }
        function.append(Array("\(pad)}\n".unicodeScalars))
        function.append(["\n"])
        return function
    }
}

