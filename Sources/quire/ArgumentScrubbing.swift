import Glibc

/// Hides a secret given as a command-line argument (a join line) from the process list.
///
/// Every local user can read any process's arguments (`ps`, `/proc/PID/cmdline`), and a join
/// line carries the secret that admits its holder to the project for as long as it is good. The
/// arguments holding it are overwritten in this process's own argument memory, which is what
/// `/proc/PID/cmdline` shows, as soon as the command starts. That leaves the moment between
/// `exec` and this call; `quire join -` (the line read from standard input) leaves none.
enum ArgumentScrubbing {
    /// Overwrites with `x` every argument after the program's name that is exactly `secret`.
    static func hide(_ secret: String) {
        guard !secret.isEmpty, CommandLine.argc > 1 else { return }
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index], String(cString: argument) == secret else { continue }
            memset(argument, 0x78, strlen(argument))
        }
    }

    /// The first line of standard input, trimmed, at most `limit` bytes: a secret that must not
    /// be an argument. Nil at end of input or past the limit.
    static func readLine(limit: Int) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(STDIN_FILENO, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { break }
            guard bytes.count < limit else { return nil }
            bytes.append(byte)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let trimmed = text.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}

private extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
