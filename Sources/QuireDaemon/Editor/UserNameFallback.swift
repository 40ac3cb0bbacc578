import Foundation

/// The name a person is shown by when their editor gives none (`initialize` without
/// `user.name`), and the daemon's own name towards peers until an editor names it: git's
/// `user.name`, else `$USER`, else the login name of the user the daemon runs as, else
/// "someone". Worked out once, when the daemon starts (never from anything an editor or a peer
/// sends), and cleaned and bounded as every shown name is.
public enum UserNameFallback {
    /// The name, from `environment` and what `gitUserName` finds.
    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment,
                               gitUserName: () -> String? = { gitConfigUserName() },
                               loginName: () -> String? = { systemLoginName() }) -> String {
        for candidate in [gitUserName(), environment["USER"], loginName()] {
            if let candidate {
                let name = PeerLink.displayName(candidate)
                if !name.isEmpty { return name }
            }
        }
        return "someone"
    }

    /// `git config --get user.name` (the person's global or system configuration, or the
    /// repository's the daemon was started in); nil when git is missing, has no name, or takes
    /// more than two seconds. At most 4 KiB of its output is read.
    public static func gitConfigUserName(environment: [String: String] = ProcessInfo.processInfo.environment,
                                         directory: String? = nil) -> String? {
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        git.arguments = ["git", "config", "--get", "user.name"]
        git.environment = environment
        if let directory { git.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        git.standardOutput = output
        git.standardError = FileHandle.nullDevice
        git.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        git.terminationHandler = { _ in ended.signal() }
        do { try git.run() } catch { return nil }
        if ended.wait(timeout: .now() + 2) == .timedOut {
            git.terminate()
            return nil
        }
        guard git.terminationStatus == 0 else { return nil }
        let bytes = output.fileHandleForReading.readData(ofLength: 4096)
        let name = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }

    /// The login name of the user the daemon runs as, from the password database.
    public static func systemLoginName() -> String? {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
