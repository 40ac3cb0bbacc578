import Foundation

/// Where `quire share` and `quire join` print (stdout): lines as they come, live events with
/// the time, and the progress of files arriving: on a terminal one bar redrawn in place on the
/// last line, otherwise a plain line at the start, at every tenth and at the end.
///
/// Guarantees: callable from any thread, one line at a time (lines never interleave); a line
/// printed while the bar is shown goes above it and the bar is drawn again under it.
public final class ConsoleTerminal: @unchecked Sendable {
    public let isTerminal: Bool
    private let output: ([UInt8]) -> Void
    private let clock: () -> String
    private let lock = NSLock()
    private var bar: String?
    private var lastTenth = -1

    /// Prints to `output` (stdout by default); `isTerminal` chooses the bar or plain lines;
    /// `clock` gives the time put before live events.
    public init(isTerminal: Bool = isatty(1) == 1, output: (([UInt8]) -> Void)? = nil, clock: (() -> String)? = nil) {
        self.isTerminal = isTerminal
        self.output = output ?? Self.standardOutput
        self.clock = clock ?? Self.localTime
    }

    /// Prints `lines` as they are.
    public func say(_ lines: [String]) {
        locked { lines.forEach(putLine) }
    }

    public func say(_ line: String) { say([line]) }

    /// Prints something that happened, after the time (`14:03:22  ann joined.`).
    public func event(_ line: String) {
        let stamp = clock()
        locked { putLine("\(stamp)  \(line)") }
    }

    /// Shows how many files are on disk.
    public func progress(_ progress: ProjectProgress) {
        locked {
            if isTerminal {
                let drawn = ConsoleScreen.progressBar(progress)
                bar = drawn
                emit("\r\u{1B}[K" + drawn)
                if progress.isComplete {
                    emit("\n")
                    bar = nil
                }
            } else {
                let tenth = progress.isComplete ? 10 : progress.percent / 10
                guard tenth > lastTenth else { return }
                lastTenth = tenth
                emit(ConsoleScreen.progressLine(progress) + "\n")
            }
        }
    }

    /// Leaves the bar, if one is shown, as it is on its line: what is printed next goes under it.
    public func endProgress() {
        locked {
            guard bar != nil else { return }
            emit("\n")
            bar = nil
        }
    }

    private func putLine(_ line: String) {
        if let bar {
            emit("\r\u{1B}[K" + line + "\n" + bar)
        } else {
            emit(line + "\n")
        }
    }

    private func emit(_ text: String) { output(Array(text.utf8)) }

    private func locked(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body()
    }

    private static func standardOutput(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            // A closed stdout (the reader went away) loses the screen, not the sharing.
            guard n > 0 else { return }
            offset += n
        }
    }

    private static func localTime() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
