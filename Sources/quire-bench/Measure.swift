import Foundation
import CMallocStats
#if canImport(Glibc)
import Glibc
#endif

/// Timing and memory probes for the benchmark (never used by tests).
enum Measure {
    /// Median wall time of `repetitions` runs of `body`, in seconds.
    static func median(_ repetitions: Int, _ body: () -> Void) -> Double {
        median(repetitions, prepare: {}, body)
    }

    /// Median wall time of `repetitions` runs of `body`, each after an untimed `prepare`.
    static func median(_ repetitions: Int, prepare: () -> Void, _ body: () -> Void) -> Double {
        var times: [Double] = []
        for _ in 0..<repetitions {
            prepare()
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return times.sorted()[times.count / 2]
    }

    /// Bytes currently allocated through malloc.
    static func heapInUse() -> Int {
        Int(cmalloc_bytes_in_use())
    }

    /// Peak resident set size of this process, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }
}
