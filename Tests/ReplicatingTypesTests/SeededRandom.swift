import EditingTraces

/// Characters the random editors type: ASCII, line breaks, CR, astral and combining scalars.
let testAlphabet: [Unicode.Scalar] = ["a", "b", "c", "x", "y", "z", " ", "\n", "\n", "\r", "é", "\u{0301}", "😀", "𝄞", "中"]

extension Array where Element == Unicode.Scalar {
    var string: String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: self)
        return String(view)
    }
}

/// Seeds for randomized tests: a fixed set in CI; `QUIRE_SOAK=N` runs N more seeds.
func testSeeds(_ fixed: [UInt64]) -> [UInt64] {
    guard let soak = ProcessInfoShim.environment("QUIRE_SOAK").flatMap(UInt64.init) else { return fixed }
    return fixed + (0..<soak).map { 10_000 + $0 }
}

import Foundation

enum ProcessInfoShim {
    static func environment(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }
}
