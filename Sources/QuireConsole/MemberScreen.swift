import Glibc
import JSON
import QuireDaemon

/// The words of `quire invite`, `quire members`, `quire role` and `quire revoke`, and of roles
/// on the `quire share` / `quire join` screens (protocol/decisions/roles.md). Like the rest of
/// `ConsoleScreen`: every value from the daemon is cleaned before it is part of a line, and the
/// same values always give the same words (the time is passed in, never read).
extension ConsoleScreen {
    /// `read` -> `a reader`, as a sentence says it.
    public static func roleNoun(_ role: String) -> String {
        switch role {
        case "read": return "a reader"
        case "write": return "a writer"
        case "owner": return "an owner"
        default: return "a member"
        }
    }

    /// What `role` lets a member do, as one clause.
    public static func roleAllows(_ role: String) -> String {
        switch role {
        case "read": return "sees the text and the cursors and can follow, but cannot change anything"
        case "write": return "sees and edits the files"
        case "owner": return "sees and edits the files, and invites, changes roles and revokes"
        default: return "has no role"
        }
    }

    /// What `quire invite` says on stderr about the line it printed on stdout: the role it
    /// gives, whether it works once, when it expires (`expiresIn`: the seconds asked for).
    public static func invited(_ invitation: InvitationLine, project: String, expiresIn: Int?) -> [String] {
        var lines = ["This line lets \(invitation.once ? "the first person" : "anyone") who runs `quire join` with it into "
            + "\(quoted(clean(project, limit: 100))) as \(roleNoun(invitation.role)): \(roleAllows(invitation.role))."]
        lines.append(invitation.once ? "It works once: whoever joins with it first uses it up."
                                     : "It works for everyone you give it to; remove one with `quire revoke NAME`.")
        if let expires = invitation.expires {
            let when = expiresIn.map { duration($0) + " (\(utcTime(expires)))" } ?? utcTime(expires)
            lines.append("It expires \(when); whoever joined by then stays a member.")
        } else {
            lines.append("It does not expire (`--expires 1h` makes one that does).")
        }
        lines.append("Give it only to them: it holds a secret.")
        return lines
    }

    /// `in 7 days`, `in 2 hours`, `in 90 minutes`, `in 45 seconds`: the largest unit that
    /// divides `seconds`.
    static func duration(_ seconds: Int) -> String {
        for (unit, noun) in [(86_400, "day"), (3600, "hour"), (60, "minute")] where seconds >= unit && seconds % unit == 0 {
            return "in " + count(seconds / unit, noun)
        }
        return "in " + count(max(0, seconds), "second")
    }

    /// `2026-11-27 14:03 UTC`.
    static func utcTime(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "at \(seconds) s since 1970" }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
    }

    /// `quire members`: a heading, then one line per member: name, role (`removed` when it has
    /// none), online or not, fingerprint, and `(you)`.
    public static func members(_ members: [ProjectMember], project: String) -> [String] {
        let current = members.filter { $0.role != nil }.count
        var lines = ["\(quoted(clean(project, limit: 100))): \(count(current, "member"))"
            + (current == members.count ? "" : ", \(members.count - current) removed") + "."]
        let nameWidth = min(32, members.map { max($0.name.count, 1) }.max() ?? 1)
        for member in members {
            let name = member.name.isEmpty ? "?" : member.name
            let columns = [padded(name, nameWidth), padded(member.role ?? "removed", 7), padded(member.online ? "online" : "offline", 7)]
            lines.append("  " + columns.joined(separator: "  ") + "  \(member.fingerprint)\(member.isYou ? "  (you)" : "")")
        }
        return lines
    }

    /// `text` followed by spaces up to `width` characters.
    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// `quire role`: the member as it now is.
    public static func roleChanged(_ member: ProjectMember, project: String) -> String {
        guard let role = member.role else { return "\(member.shown) has no role in \(quoted(clean(project, limit: 100)))." }
        return "\(member.shown) is now \(roleNoun(role)) of \(quoted(clean(project, limit: 100))): \(roleAllows(role))."
    }

    /// `quire revoke`: what was taken back, and what could not be.
    public static func revoked(_ member: ProjectMember, project: String) -> [String] {
        ["\(member.shown) was removed from \(quoted(clean(project, limit: 100))).",
         "Their links are cut and they can no longer join or link; what they already had stays with them."]
    }

    /// A daemon's refusal as a person reads it: its message without the JSON-RPC wording
    /// (`Invalid params: `, `params.member: `), cleaned and cut.
    public static func refusal(_ message: String) -> String {
        var text = Substring(message)
        if text.hasPrefix("Invalid params: ") { text = text.dropFirst("Invalid params: ".count) }
        if text.hasPrefix("params."), let colon = text.range(of: ": "),
           !text[..<colon.lowerBound].contains(" ") { text = text[colon.upperBound...] }
        return clean(String(text), limit: DisplayText.maximumReasonLength)
    }

    /// The line for a `project/removed` notification about project `key` (nil for another
    /// project): "You were removed from ... by an owner." when the daemon gives no reason, else
    /// its reason, which says whether an owner removed this daemon or its invitation was refused.
    public static func removed(_ params: JSONValue, key: String) -> String? {
        guard params["key"]?.stringValue == key else { return nil }
        let name = clean(params["name"]?.stringValue ?? "", limit: 100)
        let reason = clean(params["reason"]?.stringValue ?? "", limit: DisplayText.maximumReasonLength)
        let project = name.isEmpty ? "the project" : quoted(name)
        return reason.isEmpty ? "You were removed from \(project) by an owner." : "You are no longer in \(project): \(reason)."
    }

    /// Whether a `peer/changed` notification is the sharing daemon refusing the secret of the
    /// line being joined: a failed authentication on an attempt to one of `targets` (the line's
    /// addresses and relay as `host:port`, or the `--via` command). An invitation used up
    /// (`--once`), expired or withdrawn fails so: its secret is gone from the sharing daemon.
    public static func isLineRefused(_ params: JSONValue, targets: [String]) -> Bool {
        guard params["event"]?.stringValue == "failed", let reason = params["reason"]?.stringValue,
              reason.contains("authentication failed"), let address = params["address"]?.stringValue else { return false }
        return targets.contains { !$0.isEmpty && address.contains($0) }
    }

    /// What `quire join` says when the sharing daemon refuses the line before anything arrived.
    /// `quire join` with no link to the host `seconds` after it asked: it keeps trying.
    public static func noLinkYet(name: String, seconds: Int, relay: Bool) -> String {
        "No link to the host of \(quoted(clean(name, limit: 100))) after \(seconds) s: it may not be running"
            + (relay ? ", or this line was used up or has expired (the relay pairs no one with it)" : "")
            + ". Still trying; Ctrl-C stops."
    }

    public static let lineRefused = "The sharing daemon does not take this line: it was used already (a --once line), "
        + "has expired, was withdrawn, or is damaged. Ask for a new one (`quire invite`)."

    /// The last line of `quire join` (or `quire share`) once removed from the project.
    public static func endedRemoved(_ name: String, sharing: Bool) -> String {
        "\(sharing ? "Sharing" : "Following") \(quoted(clean(name, limit: 100))) ended: you are no longer in it. "
            + "Its files stay where they are; nothing new arrives."
    }
}
