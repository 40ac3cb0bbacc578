import ArgumentParser
import Foundation
import JSON
import QuireConsole

// Who may do what in a shared project (protocol/decisions/roles.md): `quire invite`, `quire
// members`, `quire role` and `quire revoke`, asked of the quire running for the data directory.

/// The `--data-dir` of the daemon these commands ask (they never start one).
struct RunningDataDirectory: ParsableArguments {
    @Option(help: ArgumentHelp("The data directory of the quire to ask (the one `quire share` or `quire join` runs with).",
                               discussion: "Default: $XDG_DATA_HOME/quire, or ~/.local/share/quire."))
    var dataDir: String?
}

/// `quire invite [--role R] [--once] [--expires D] [DIR]`: a new join line for the project,
/// alone on stdout (`quire join $(quire invite ...)` works); what it allows on stderr.
struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Print a new join line for a shared project, with a role: `quire invite --role read --once --expires 1h`.",
        discussion: """
        The line alone goes to stdout, so it can be piped or copied; what it allows goes to stderr. \
        Whoever joins with it becomes a member with its role: read (sees the text and the cursors, \
        can follow, cannot edit), write (also edits) or owner (also invites, changes roles and \
        revokes). Only an owner invites. DIR: the project's folder or one in it, or a file shared \
        by itself (default: the current folder).
        """
    )

    @Option(help: "read, write or owner.")
    var role: String = "write"

    @Flag(help: "The line works once: whoever joins with it first uses it up.")
    var once = false

    @Option(help: "The line stops working after this long: 90s, 30m, 2h, 7d (at most 30 days). Default: never.")
    var expires: String?

    @Argument(help: "The project's folder, one in it, or a file shared by itself (default: the current folder).")
    var directory: String?

    @OptionGroup var data: RunningDataDirectory

    func validate() throws {
        do {
            _ = try MemberArguments.role(role)
            if let expires { _ = try MemberArguments.expiry(expires) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let role = try MemberArguments.role(self.role)
        let expiresIn = try expires.map(MemberArguments.expiry)
        try RunningDaemon.run(dataDirectory: data.dataDir, clientName: "quire invite") { daemon in
            let project = try daemon.project(holding: directory)
            var params: [String: JSONValue] = ["key": .string(project.key), "role": .string(role), "once": .bool(once)]
            if let expiresIn { params["expiresIn"] = .integer(Int64(expiresIn)) }
            let invitation = try InvitationLine(reply: daemon.request("project/invite", .object(params)))
            printLines([invitation.line])
            printLines(ConsoleScreen.invited(invitation, project: project.name, expiresIn: expiresIn), toStandardError: true)
        }
    }
}

/// `quire members [DIR]` (or `quire who`): the project's members, their roles, who is online, and you.
struct MembersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "members",
        abstract: "List a shared project's members: name, role, online, key fingerprint, and which one is you.",
        discussion: "DIR: the project's folder or one in it, or a file shared by itself (default: the current folder). Removed members are listed last.",
        aliases: ["who"]
    )

    @Argument(help: "The project's folder, one in it, or a file shared by itself (default: the current folder).")
    var directory: String?

    @OptionGroup var data: RunningDataDirectory

    func run() throws {
        try RunningDaemon.run(dataDirectory: data.dataDir, clientName: "quire members") { daemon in
            let project = try daemon.project(holding: directory)
            let members = try ProjectMember.list(reply: daemon.request("project/members", ["key": .string(project.key)]))
            printLines(ConsoleScreen.members(members, project: project.name))
        }
    }
}

/// `quire role MEMBER ROLE [DIR]`: gives a member another role; the change reaches every daemon
/// of the project.
struct RoleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role",
        abstract: "Give a member of a shared project another role: `quire role bob read`.",
        discussion: """
        MEMBER is a name or a key fingerprint (or its start) as `quire members` shows them; a name \
        two members have is refused: use the fingerprint. ROLE is read, write or owner. Only an \
        owner changes roles, and the last owner cannot give up the role. The change reaches every \
        daemon of the project and takes effect on live links.
        """
    )

    @Argument(help: "The member: a name or a key fingerprint, as `quire members` shows them.")
    var member: String

    @Argument(help: "read, write or owner.")
    var role: String

    @Argument(help: "The project's folder, one in it, or a file shared by itself (default: the current folder).")
    var directory: String?

    @OptionGroup var data: RunningDataDirectory

    func validate() throws {
        do {
            _ = try MemberArguments.member(member)
            _ = try MemberArguments.role(role)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let member = try MemberArguments.member(self.member)
        let role = try MemberArguments.role(self.role)
        try RunningDaemon.run(dataDirectory: data.dataDir, clientName: "quire role") { daemon in
            let project = try daemon.project(holding: directory)
            let reply = try daemon.request("project/role", ["key": .string(project.key), "member": .string(member), "role": .string(role)])
            printLines([ConsoleScreen.roleChanged(try ProjectMember(json: reply, method: "project/role"), project: project.name)])
        }
    }
}

/// `quire revoke MEMBER [DIR]`: removes a member: its links are cut at once and it can no longer
/// join; it keeps what it already had.
struct RevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Remove a member from a shared project: `quire revoke bob`.",
        discussion: """
        MEMBER is a name or a key fingerprint (or its start) as `quire members` shows them. Only an \
        owner revokes. The member's links are cut at once on every daemon of the project and it \
        can no longer link or join, whatever line it holds; the files and text it already has \
        stay with it.
        """
    )

    @Argument(help: "The member: a name or a key fingerprint, as `quire members` shows them.")
    var member: String

    @Argument(help: "The project's folder, one in it, or a file shared by itself (default: the current folder).")
    var directory: String?

    @OptionGroup var data: RunningDataDirectory

    func validate() throws {
        do { _ = try MemberArguments.member(member) } catch { throw ValidationError(error.description) }
    }

    func run() throws {
        let member = try MemberArguments.member(self.member)
        try RunningDaemon.run(dataDirectory: data.dataDir, clientName: "quire revoke") { daemon in
            let project = try daemon.project(holding: directory)
            let reply = try daemon.request("project/revoke", ["key": .string(project.key), "member": .string(member)])
            printLines(ConsoleScreen.revoked(try ProjectMember(json: reply, method: "project/revoke"), project: project.name))
        }
    }
}
