import QuireProject
import ReplicatingTypes
import Testing

/// The writer's rule 5: no plan makes or changes a git repository. A `HEAD` git would take is
/// never written or moved into place, and nothing goes into a folder whose `HEAD` on disk git
/// takes (or could: a link, a file that is not UTF-8 text), whatever the tree says is there.
@Suite struct ProjectWriterGitTests {
    let f1 = FileID(replica: ReplicaID(1), serial: 1)
    let f2 = FileID(replica: ReplicaID(1), serial: 2)
    let f3 = FileID(replica: ReplicaID(1), serial: 3)
    let head = "ref: refs/heads/main\n"

    func wanted(_ pairs: [(FileID, String, String)]) throws -> [FileID: ProjectWriter.Wanted] {
        var result: [FileID: ProjectWriter.Wanted] = [:]
        for (file, path, text) in pairs { result[file] = ProjectWriter.Wanted(path: try ProjectPath(path), text: text) }
        return result
    }

    @Test func aHeadGitWouldTakeIsNeverWrittenAnOrdinaryOneIs() throws {
        var disk = MemoryDisk()
        let want = try wanted([(f1, "evil/HEAD", head), (f2, "evil/config", "[core]\n\tfsmonitor = x\n"), (f3, "notes/HEAD", "# Heading <A17>\n")])
        let plan = ProjectWriter.plan(wanted: want, known: [:], open: [], disk: disk)
        #expect(plan.held == [f1: .repository])
        disk.perform(plan.actions)
        #expect(disk.entries["evil/HEAD"] == nil && disk.entries["evil/config"] != nil && disk.entries["notes/HEAD"] != nil)
        // The same HEAD under a name git finds on a case-insensitive disk, and at the root.
        for path in ["evil/head", "HEAD"] {
            let again = ProjectWriter.plan(wanted: try wanted([(f1, path, String(repeating: "0f", count: 20))]), known: [:], open: [], disk: disk)
            #expect(again.held == [f1: .repository], "\(path)")
        }
    }

    @Test func nothingGoesIntoAFolderWhoseHeadOnDiskGitTakes() throws {
        for headEntry in [DiskEntry.file(head), .symbolicLink, .file(nil)] {
            let disk = MemoryDisk(entries: ["repo.git/HEAD": headEntry, "repo.git/config": .file("[core]\n")])
            let known = try wanted([(f2, "repo.git/config", "[core]\n")])
            let want = try wanted([(f2, "repo.git/config", "[core]\n\tfsmonitor = x\n"), (f3, "repo.git/sub/commondir", "../../evil\n")])
            let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
            #expect(plan.actions.isEmpty, "\(headEntry)")
            #expect(plan.held == [f2: .repository, f3: .repository], "\(headEntry)")
        }
        // A root that is a repository's takes nothing either.
        let root = MemoryDisk(entries: ["HEAD": .file(head)])
        #expect(ProjectWriter.plan(wanted: try wanted([(f1, "a.txt", "a")]), known: [:], open: [], disk: root).held == [f1: .repository])
    }

    /// The tree moving the person's `HEAD` away does not open their repository: the move is held
    /// (it would put a repository's HEAD elsewhere), so the folder still holds it on disk.
    @Test func movingTheHeadAwayInTheTreeOpensNothing() throws {
        let disk = MemoryDisk(entries: ["repo.git/HEAD": .file(head), "repo.git/objects/x": .file("x")])
        let known = try wanted([(f1, "repo.git/HEAD", head)])
        for away in ["elsewhere/HEAD", "repo.git/HEAD.old"] {
            let want = try wanted([(f1, away, head), (f2, "repo.git/commondir", "../evil\n")])
            let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
            #expect(plan.actions.isEmpty, "\(away)")
            #expect(plan.held[f2] == .repository, "\(away)")
        }
        // A file the tree moves onto a HEAD's name with a HEAD's text is held too.
        let plain = MemoryDisk(entries: ["notes/a.txt": .file(head)])
        let onto = ProjectWriter.plan(wanted: try wanted([(f3, "notes/HEAD", head)]), known: try wanted([(f3, "notes/a.txt", head)]), open: [], disk: plain)
        #expect(onto.held == [f3: .repository] && onto.actions.isEmpty)
    }

    /// The tree deleting or moving away a repository's files removes or moves none of them: not
    /// its HEAD (which would make a later write live once the HEAD came back), not the rest
    /// (which would strip the person's repository), not in the same plan as a write either.
    @Test func aRepositorysFilesAreNeitherRemovedNorMovedAway() throws {
        let disk = MemoryDisk(entries: ["repo.git/HEAD": .file(head), "repo.git/config": .file("[core]\n"),
                                        "repo.git/refs/heads/main": .file("x\n")])
        let known = try wanted([(f1, "repo.git/HEAD", head), (f2, "repo.git/config", "[core]\n"), (f3, "repo.git/refs/heads/main", "x\n")])
        let deleted = ProjectWriter.plan(wanted: [:], known: known, open: [], disk: disk)
        #expect(deleted.actions.isEmpty)
        #expect(deleted.held == [f1: .repository, f2: .repository, f3: .repository])
        #expect(deleted.known == known, "still known where they are")
        let headGoneConfigWritten = ProjectWriter.plan(wanted: try wanted([(f2, "repo.git/config", "[core]\n\tfsmonitor = x\n")]),
                                                       known: known, open: [], disk: disk)
        #expect(headGoneConfigWritten.actions.isEmpty && headGoneConfigWritten.held.count == 3)
        let movedOut = ProjectWriter.plan(wanted: try wanted([(f1, "repo.git/HEAD", head), (f2, "new/config", "[core]\n"), (f3, "new/refs/heads/main", "x\n")]),
                                          known: known, open: [], disk: disk)
        #expect(movedOut.actions.isEmpty && movedOut.held == [f2: .repository, f3: .repository])
        // Another system's repository folder is kept the same way.
        let hg = MemoryDisk(entries: [".hg/hgrc": .file("[ui]\n"), ".hg/requires": .file("store\n")])
        let hgKnown = try wanted([(f1, ".hg/hgrc", "[ui]\n"), (f2, ".hg/requires", "store\n")])
        let hgPlan = ProjectWriter.plan(wanted: try wanted([(f2, "requires.txt", "store\n")]), known: hgKnown, open: [], disk: hg)
        #expect(hgPlan.actions.isEmpty && hgPlan.held == [f1: .repository, f2: .repository])
    }

    /// A folder whose HEAD git would not take is an ordinary one: its files are removed, moved
    /// and written as any others.
    @Test func aFolderWithAnOrdinaryHeadIsOrdinary() throws {
        var disk = MemoryDisk(entries: ["notes/HEAD": .file("# Heading\n"), "notes/config": .file("f(x)\n")])
        let known = try wanted([(f1, "notes/HEAD", "# Heading\n"), (f2, "notes/config", "f(x)\n")])
        let want = try wanted([(f2, "notes/config.txt", "f(x)\n"), (f3, "notes/new.txt", "<A17>\n")])
        let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
        #expect(plan.held.isEmpty)
        disk.perform(plan.actions)
        #expect(disk.entries["notes/HEAD"] == nil && disk.entries["notes/config.txt"] == .file("f(x)\n") && disk.entries["notes/new.txt"] == .file("<A17>\n"))
    }
}

/// Rule 5 for other version-control systems: nothing is written or moved into their repository
/// folders (Mercurial's `.hg/hgrc` names hooks it runs), in any letter case; a folder merely
/// named like one elsewhere in a name is written as any other.
@Suite struct ProjectWriterRepositoryFolderTests {
    let f1 = FileID(replica: ReplicaID(1), serial: 1)
    let f2 = FileID(replica: ReplicaID(1), serial: 2)
    let f3 = FileID(replica: ReplicaID(1), serial: 3)

    @Test func nothingGoesIntoAnotherSystemsRepositoryFolder() throws {
        var disk = MemoryDisk(entries: [".hg/hgrc": .file("[ui]\n"), "a.txt": .file("a\n")])
        let known = [f1: ProjectWriter.Wanted(path: try ProjectPath(".hg/hgrc"), text: "[ui]\n"),
                     f2: ProjectWriter.Wanted(path: try ProjectPath("a.txt"), text: "a\n")]
        var want = known
        want[f1]?.text = "[hooks]\npre-status = touch /tmp/quire-pwned\n"
        want[f2]?.path = try ProjectPath("sub/.JJ/repo/config.toml")   // a move into one
        want[f3] = ProjectWriter.Wanted(path: try ProjectPath("vendor/_darcs/prefs/defaults"), text: "apply posthook x\n")
        let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
        #expect(plan.actions.isEmpty)
        #expect(plan.held == [f1: .repository, f2: .repository, f3: .repository])
        let ordinary = [f3: ProjectWriter.Wanted(path: try ProjectPath("docs/.hgignore-notes/hg.txt"), text: "f(x)\n")]
        let written = ProjectWriter.plan(wanted: ordinary, known: [:], open: [], disk: disk)
        #expect(written.held.isEmpty)
        disk.perform(written.actions)
        #expect(disk.entries["docs/.hgignore-notes/hg.txt"] == .file("f(x)\n"))
    }

    @Test func theNamesMatchInAnyLetterCase() {
        #expect(RepositoryFolders.isMetadataName(".hg") && RepositoryFolders.isMetadataName(".Hg") && RepositoryFolders.isMetadataName("_DARCS"))
        #expect(!RepositoryFolders.isMetadataName(".hgignore") && !RepositoryFolders.isMetadataName("hg") && !RepositoryFolders.isMetadataName(".h"))
    }
}
