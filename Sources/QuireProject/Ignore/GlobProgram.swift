/// A gitignore glob compiled to a small regular-expression program over bytes, run by a Pike VM:
/// matching costs O(pattern × path) at worst, whatever the pattern (no backtracking blow-up).
///
/// Semantics are git's `wildmatch` with `WM_PATHNAME`: `*` and `?` and classes never match `/`;
/// `**` matches across `/` only as a whole component (`**/x`, `x/**/y`, `x/**`, `**`), other
/// runs of `*` are one `*`; `\` escapes the next byte; `[...]` classes take `!`/`^` negation,
/// ranges, `\` escapes and the POSIX classes `[:alpha:]` etc.; an unterminated class or a `\` at
/// the end makes the pattern match nothing (as in git). Matching is bytewise and case-sensitive.
struct GlobProgram: Sendable {
    enum Instruction: Sendable {
        case byte(UInt8)
        case anyButSlash
        case anyByte
        case byteClass(ByteSet)
        case split(Int, Int)
        case jump(Int)
        case match
    }

    private(set) var instructions: [Instruction] = []
    /// False for patterns that can never match (git's ABORT on a malformed pattern).
    private(set) var canMatch = true

    init(_ pattern: [UInt8]) {
        compile(pattern)
    }

    private mutating func emitStar(matchingSlash: Bool) {
        // L: split(L+1, L+3); L+1: any; L+2: jump L; L+3:
        let start = instructions.count
        instructions.append(.split(start + 1, start + 3))
        instructions.append(matchingSlash ? .anyByte : .anyButSlash)
        instructions.append(.jump(start))
    }

    /// `(.*/)?`: nothing, or anything that ends with `/`.
    private mutating func emitDirectories() {
        let start = instructions.count
        // start: split(start+1, end); start+1..: .* ; '/' ; end:
        instructions.append(.split(start + 1, start + 5))
        emitStar(matchingSlash: true)
        instructions.append(.byte(UInt8(ascii: "/")))
    }

    private mutating func compile(_ p: [UInt8]) {
        let slash = UInt8(ascii: "/"), star = UInt8(ascii: "*")
        var i = 0
        while i < p.count {
            let c = p[i]
            switch c {
            case star:
                var j = i
                while j < p.count, p[j] == star { j += 1 }
                let run = j - i
                let atStart = i == 0 || p[i - 1] == slash
                let atEnd = j == p.count || p[j] == slash
                if run >= 2 && atStart && atEnd {
                    if j == p.count {
                        // `**` at the end (`x/**`, or the whole pattern): anything, across `/`.
                        emitStar(matchingSlash: true)
                        i = j
                    } else {
                        // `**/` at the start or after a `/`: zero or more whole folders.
                        emitDirectories()
                        i = j + 1
                    }
                } else {
                    emitStar(matchingSlash: false)
                    i = j
                }
            case UInt8(ascii: "?"):
                instructions.append(.anyButSlash)
                i += 1
            case UInt8(ascii: "\\"):
                guard i + 1 < p.count else { canMatch = false; return }
                instructions.append(.byte(p[i + 1]))
                i += 2
            case UInt8(ascii: "["):
                guard let (set, next) = ByteSet.parseClass(p, from: i + 1) else { canMatch = false; return }
                instructions.append(.byteClass(set))
                i = next
            default:
                instructions.append(.byte(c))
                i += 1
            }
        }
        instructions.append(.match)
    }

    /// Whether the whole of `text` matches.
    /// - Complexity: O(instructions × text)
    func matches<C: Collection>(_ text: C) -> Bool where C.Element == UInt8 {
        guard canMatch else { return false }
        var current = ThreadList(capacity: instructions.count)
        var next = ThreadList(capacity: instructions.count)
        add(0, to: &current)
        for byte in text {
            next.clear()
            for pc in current.items {
                switch instructions[pc] {
                case .byte(let b): if b == byte { add(pc + 1, to: &next) }
                case .anyButSlash: if byte != UInt8(ascii: "/") { add(pc + 1, to: &next) }
                case .anyByte: add(pc + 1, to: &next)
                case .byteClass(let set): if byte != UInt8(ascii: "/"), set.contains(byte) { add(pc + 1, to: &next) }
                case .match, .split, .jump: break
                }
            }
            swap(&current, &next)
            if current.items.isEmpty { return false }
        }
        return current.items.contains { if case .match = instructions[$0] { return true } else { return false } }
    }

    /// Adds `pc` and everything reachable from it without reading a byte.
    private func add(_ pc: Int, to list: inout ThreadList) {
        guard !list.contains(pc) else { return }
        list.insert(pc)
        switch instructions[pc] {
        case .jump(let target): add(target, to: &list)
        case .split(let a, let b):
            add(a, to: &list)
            add(b, to: &list)
        default: break
        }
    }

    /// The Pike VM's set of program counters for one step, in insertion order.
    private struct ThreadList {
        var items: [Int] = []
        var member: [Bool]

        init(capacity: Int) {
            member = Array(repeating: false, count: capacity)
            items.reserveCapacity(capacity)
        }

        func contains(_ pc: Int) -> Bool { member[pc] }

        mutating func insert(_ pc: Int) {
            member[pc] = true
            items.append(pc)
        }

        mutating func clear() {
            for pc in items { member[pc] = false }
            items.removeAll(keepingCapacity: true)
        }
    }
}

/// A set of bytes (a glob's character class).
struct ByteSet: Sendable {
    private var bits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    func contains(_ byte: UInt8) -> Bool {
        let bit = UInt64(1) << UInt64(byte & 63)
        switch byte >> 6 {
        case 0: return bits.0 & bit != 0
        case 1: return bits.1 & bit != 0
        case 2: return bits.2 & bit != 0
        default: return bits.3 & bit != 0
        }
    }

    mutating func insert(_ byte: UInt8) {
        let bit = UInt64(1) << UInt64(byte & 63)
        switch byte >> 6 {
        case 0: bits.0 |= bit
        case 1: bits.1 |= bit
        case 2: bits.2 |= bit
        default: bits.3 |= bit
        }
    }

    mutating func invert() {
        bits = (~bits.0, ~bits.1, ~bits.2, ~bits.3)
    }

    /// The class starting just after `[` at `start`, and the index after its `]`; nil when the
    /// class is not closed (git's wildmatch then matches nothing).
    static func parseClass(_ p: [UInt8], from start: Int) -> (ByteSet, Int)? {
        var set = ByteSet()
        var i = start
        var negated = false
        if i < p.count, p[i] == UInt8(ascii: "!") || p[i] == UInt8(ascii: "^") {
            negated = true
            i += 1
        }
        var first = true
        var previous: UInt8?
        while i < p.count {
            var c = p[i]
            if c == UInt8(ascii: "]") && !first { break }
            first = false
            if c == UInt8(ascii: "\\") {
                i += 1
                guard i < p.count else { return nil }
                c = p[i]
                set.insert(c)
                previous = c
                i += 1
            } else if c == UInt8(ascii: "-"), let low = previous, i + 1 < p.count, p[i + 1] != UInt8(ascii: "]") {
                var high = p[i + 1]
                i += 2
                if high == UInt8(ascii: "\\") {
                    guard i < p.count else { return nil }
                    high = p[i]
                    i += 1
                }
                if low <= high {
                    for b in low...high { set.insert(b) }
                }
                previous = nil
            } else if c == UInt8(ascii: "["), i + 1 < p.count, p[i + 1] == UInt8(ascii: ":") {
                guard let close = findPosixEnd(p, from: i + 2) else {
                    // Not a POSIX class after all: a literal `[`.
                    set.insert(c)
                    previous = c
                    i += 1
                    continue
                }
                let name = String(decoding: p[(i + 2)..<close], as: UTF8.self)
                guard let members = posixClass(name) else { return nil }
                for b in members { set.insert(b) }
                previous = nil
                i = close + 2
            } else {
                set.insert(c)
                previous = c
                i += 1
            }
        }
        guard i < p.count else { return nil }
        if negated { set.invert() }
        return (set, i + 1)
    }

    /// The index of the `:` of the `:]` that closes a POSIX class name starting at `from`.
    private static func findPosixEnd(_ p: [UInt8], from: Int) -> Int? {
        var i = from
        while i + 1 < p.count {
            if p[i] == UInt8(ascii: ":") && p[i + 1] == UInt8(ascii: "]") { return i }
            if p[i] == UInt8(ascii: "]") { return nil }
            i += 1
        }
        return nil
    }

    private static func posixClass(_ name: String) -> [UInt8]? {
        let all = (0...127).map { UInt8($0) }
        func scalar(_ b: UInt8) -> Unicode.Scalar { Unicode.Scalar(b) }
        switch name {
        case "alnum": return all.filter { scalar($0).properties.isAlphabetic || (48...57).contains($0) }
        case "alpha": return all.filter { (65...90).contains($0) || (97...122).contains($0) }
        case "blank": return [32, 9]
        case "cntrl": return all.filter { $0 < 32 || $0 == 127 }
        case "digit": return Array(48...57)
        case "graph": return all.filter { $0 > 32 && $0 < 127 }
        case "lower": return Array(97...122)
        case "print": return all.filter { $0 >= 32 && $0 < 127 }
        case "punct": return all.filter { $0 > 32 && $0 < 127 && !((48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0)) }
        case "space": return [32, 9, 10, 11, 12, 13]
        case "upper": return Array(65...90)
        case "xdigit": return Array(48...57) + Array(65...70) + Array(97...102)
        default: return nil
        }
    }
}
