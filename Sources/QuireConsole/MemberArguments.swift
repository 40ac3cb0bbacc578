/// The command-line values of `quire invite`, `quire role` and `quire revoke`, checked before
/// the daemon is asked anything: each refusal says what is wrong with a cleaned, bounded part of
/// what was typed.
public enum MemberArguments {
    /// The roles a person can give, least first.
    public static let roles = ["read", "write", "owner"]

    /// `--role` or `ROLE`: `read`, `write` or `owner`, as `project/invite` and `project/role` take them.
    public static func role(_ text: String) throws(ConsoleArgumentError) -> String {
        let trimmed = text.trimmingSpaces.lowercased()
        guard roles.contains(trimmed) else {
            throw ConsoleArgumentError("\(ConsoleArguments.shown(text)) is no role: a role is read (sees the text and cursors, "
                + "cannot edit), write (also edits) or owner (also invites, changes roles and revokes)")
        }
        return trimmed
    }

    /// The longest invitation: what `project/invite` takes (30 days).
    public static let maximumExpirySeconds = 30 * 24 * 3600

    /// `--expires 30m|2h|7d` (also `90s`): the seconds until the invitation can no longer be
    /// used, 1 second to 30 days.
    public static func expiry(_ text: String) throws(ConsoleArgumentError) -> Int {
        let trimmed = text.trimmingSpaces.lowercased()
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 24 * 3600]
        guard let unit = trimmed.last, let seconds = units[unit], trimmed.count >= 2, trimmed.count <= 8,
              trimmed.dropLast().allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(trimmed.dropLast()),
              count >= 1, count <= maximumExpirySeconds / seconds else {
            throw ConsoleArgumentError("--expires \(ConsoleArguments.shown(text)): a duration is a number and s, m, h or d "
                + "(90s, 30m, 2h, 7d), at most 30 days")
        }
        return count * seconds
    }

    /// `MEMBER`: a name or a key fingerprint (or its start), as `quire members` shows them: 1 to
    /// 200 bytes, no control characters (what `project/role` and `project/revoke` take).
    public static func member(_ text: String) throws(ConsoleArgumentError) -> String {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= 200,
              !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) else {
            throw ConsoleArgumentError("member \(ConsoleArguments.shown(text)): name a member by the name or the fingerprint "
                + "`quire members` shows (1 to 200 bytes, no control characters)")
        }
        return trimmed
    }
}
