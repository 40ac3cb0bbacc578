import JSON
import QuireDaemon

/// The words `quire share` and `quire join` print: the screen once a project is shared or
/// joined, the progress bar, and one line per thing that happens (someone joined, left, an
/// attempt failed, files arrived).
///
/// Guarantees: every name, path, address and reason from the daemon is cleaned before it is
/// part of a line (no control, format or separator characters, so nothing can move the cursor,
/// clear the screen or forge a line) and cut to a bound; no line holds a line break but the
/// ones this type puts between lines; nothing here reads a clock or a terminal, so the same
/// values always give the same words.
public enum ConsoleScreen {
    /// Left-out files listed by name on the share screen; the rest are counted.
    public static let shownLeftOut = 5
    /// Characters a path or an address is cut to.
    static let pathLimit = 200

    // MARK: quire share

    /// The screen once a project is shared: its name and folder, how many files, the first
    /// left-out files with their reasons, the addresses, and the line the partner runs.
    /// `daemonNote` says which daemon shares it (this process's, or one already running).
    public static func shared(_ project: SharedProject, daemonNote: String) -> [String] {
        var lines = ["Sharing \(quoted(project.name)) from \(project.root): \(count(project.files, "file")) shared."]
        if let file = project.file {
            lines = ["Sharing the file \(file) by itself: nothing else in its folder is shared.",
                     "Its members and roles are its own: `quire invite --role read FILE` makes a reader's line, `quire members FILE` lists them."]
        }
        if !project.leftOut.isEmpty {
            lines.append("Left out: \(count(project.leftOutCount, "file")).")
            for file in project.leftOut.prefix(shownLeftOut) {
                lines.append("  \(file.path): \(file.reason)")
            }
            if project.leftOutCount > min(project.leftOut.count, shownLeftOut) {
                lines.append("  and \(project.leftOutCount - min(project.leftOut.count, shownLeftOut)) more")
            }
        }
        if !project.addresses.isEmpty {
            lines.append("Listening on \(project.addresses.joined(separator: ", ")).")
        }
        lines.append(daemonNote)
        lines += ["", "Your partner runs:", "", "    quire join \(project.line)", "",
                  "Open the files in Vim, Neovim or Emacs as usual. Ctrl-C stops sharing."]
        return lines
    }

    /// The screen of `quire share --detach`: as `shared`, said of the quire already running,
    /// which keeps sharing after the command returns.
    public static func sharedDetached(_ project: SharedProject) -> [String] {
        var lines = shared(project, daemonNote: "Shared by the quire already running for this data directory; it keeps sharing while it runs.")
        lines.removeLast()
        lines.append("Reopen the file in your editor (:e) to join it there; the share ends when that quire stops.")
        return lines
    }

    /// The last line of `quire share`.
    public static func stoppedSharing(_ name: String) -> String {
        "Sharing \(quoted(name)) stopped."
    }

    /// Said when the daemon already shared (or followed) the project before this command.
    public static func alreadyRunning(_ name: String, sharing: Bool) -> String {
        "\(quoted(clean(name, limit: 100))) was already \(sharing ? "shared" : "followed") before this command: Ctrl-C here leaves it so."
    }

    /// The last line then.
    public static func leftRunning(_ name: String, sharing: Bool) -> String {
        "Left \(quoted(clean(name, limit: 100))) \(sharing ? "shared" : "followed"), as it was before."
    }

    // MARK: quire join

    /// The first line of `quire join`, before the daemon has answered.
    public static func joining(name: String, directory: String) -> String {
        "Joining \(quoted(clean(name, limit: 100))) into \(clean(directory, limit: pathLimit))..."
    }

    /// Once every file is on disk.
    public static func joined(name: String, files: Int, directory: String) -> [String] {
        ["\(count(files, "file")) of \(quoted(clean(name, limit: 100))) \(files == 1 ? "is" : "are") in \(clean(directory, limit: pathLimit)).",
         "Open them in Vim, Neovim or Emacs as usual. Ctrl-C stops following."]
    }

    /// The last line of `quire join`.
    public static func stoppedFollowing(_ name: String) -> String {
        "Following \(quoted(clean(name, limit: 100))) stopped; its files stay where they are."
    }

    /// A progress bar of `width` cells: `[#######-------]  57/142 files  1.2 MB`.
    public static func progressBar(_ progress: ProjectProgress, width: Int = 24) -> String {
        let cells = max(1, width)
        let filled = progress.files == 0 ? cells : cells * min(progress.written, progress.files) / progress.files
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]  "
            + "\(progress.written)/\(progress.files) files  \(size(progress.bytes))"
    }

    /// The same as one plain line, for output that is not a terminal.
    public static func progressLine(_ progress: ProjectProgress) -> String {
        "\(quoted(progress.name)): \(progress.written) of \(count(progress.files, "file")) on disk (\(size(progress.bytes)), \(progress.percent)%)"
    }

    // MARK: Live lines

    /// The line for notification `method` about project `key`; nil for one that names another
    /// project or scope (`key` of `project/progress` and `project/removed`, `scope` of
    /// `peer/changed`, as `peer/status` words it: `project <key>`) or says nothing to show.
    /// `role`: the role `peer/status` gives the link that joined, shown with it.
    public static func liveLine(method: String, params: JSONValue, key: String, role: String? = nil) -> String? {
        switch method {
        case "peer/changed":
            if let scope = params["scope"]?.stringValue, scope != projectScope(key) { return nil }
            return peerChanged(params, role: role)
        case "project/removed":
            return removed(params, key: key)
        case "project/progress":
            guard let progress = ProjectProgress(params), progress.key == key else { return nil }
            return progressLine(progress)
        case "window/showMessage":
            // What the daemon tells its editors of a failure (its data directory failing, say).
            let message = clean(params["message"]?.stringValue ?? "", limit: DisplayText.maximumReasonLength)
            guard !message.isEmpty else { return nil }
            return (params["type"]?.integerValue == 1 ? "Error: " : "Warning: ") + message
        default:
            return nil
        }
    }

    /// A project's scope as `peer/status` names it.
    public static func projectScope(_ key: String) -> String { "project \(key)" }

    /// What a `peer/changed` notification says, as one line; nil when it is not one. A link
    /// that joined is shown with `role` when it is one (`bob joined as a reader.`).
    public static func peerChanged(_ params: JSONValue, role: String? = nil) -> String? {
        guard let event = params["event"]?.stringValue else { return nil }
        let user = clean(params["user"]?.stringValue ?? "", limit: DisplayText.maximumNameLength)
        let address = clean(params["address"]?.stringValue ?? "", limit: pathLimit)
        let reason = clean(params["reason"]?.stringValue ?? "", limit: DisplayText.maximumReasonLength)
        let who = user.isEmpty ? (address.isEmpty ? "someone" : address) : (address.isEmpty ? user : "\(user) (\(address))")
        switch event {
        case "joined":
            guard let role, MemberArguments.roles.contains(role) else { return "\(who) joined." }
            return "\(who) joined as \(roleNoun(role))."

        case "left":
            return reason.isEmpty ? "\(who) left." : "\(who) left: \(reason)."
        case "failed":
            // A summary (link 0) names no one: its reason says how many failed and why.
            let summary = params["link"]?.integerValue == 0
            let what = reason.isEmpty ? "a connection failed" : reason
            return summary || who == "someone" ? "\(capitalized(what))." : "\(capitalized(what)) (\(who))."
        default:
            return nil
        }
    }

    /// A size as people read it: `12 B`, `3.4 KB`, `1.2 MB`, `2.0 GB`.
    public static func size(_ bytes: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(max(0, bytes))
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(Int(value)) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    // MARK: Helpers

    /// `text` from outside, safe to print: control, format and separator characters dropped,
    /// spaces trimmed, at most `limit` characters.
    public static func clean(_ text: String, limit: Int) -> String {
        DisplayText.clean(text, limit: limit)
    }

    static func quoted(_ name: String) -> String { "\"\(name)\"" }

    static func count(_ number: Int, _ noun: String) -> String {
        number == 1 ? "1 \(noun)" : "\(number) \(noun)s"
    }

    private static func capitalized(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }
}
