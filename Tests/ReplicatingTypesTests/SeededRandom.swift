/// A deterministic random source (SplitMix64) so every randomized test is reproducible from its seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    let seed: UInt64

    init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }
}

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
