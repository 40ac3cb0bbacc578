/// A deterministic random source (SplitMix64) for what tests and benchmarks generate: every
/// randomized test and generated history is the same on every run and machine, reproducible from
/// its seed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// A number in `0..<bound` (1 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}
