import Foundation
import Logging
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// Another user on the same machine against the data directory: a directory, lock, replica or
/// key that is not the user's own, or is open to others, is refused with an error saying how to
/// fix it, and nothing outside the directory changes (a link's target is left as it was).
@Suite struct DataDirectoryTrustTests {
    static let otherUID: uid_t = 54321

    /// The store at `path`. A lock this very process held a moment ago may still be held by a
    /// child another test is spawning (it shares the lock's descriptor until its exec closes it):
    /// such a refusal is retried for a moment; any other error is the answer.
    static func open(_ path: String) throws -> DocumentStore {
        let deadline = Date().addingTimeInterval(5)
        while true {
            do {
                return try DocumentStore(path: path, logger: Logger(label: "test"))
            } catch let error as StorageError where error.isLockHeld && "\(error)".contains("pid \(getpid())") && Date() < deadline {
                usleep(20_000)
            }
        }
    }

    /// The error opening the store at `path` gives, as text; nil when it opens.
    static func refusal(_ path: String) -> String? {
        do {
            _ = try open(path)
            return nil
        } catch {
            #expect(error is UntrustedFileError, "\(error)")
            return "\(error)"
        }
    }

    /// A data directory made and closed again, as a previous run leaves it.
    static func madeDataDirectory() throws -> String {
        let path = DaemonProcess.temporaryDirectory("trust") + "/data"
        _ = try open(path)
        return path
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test func aDirectoryOpenToWritesByOthersIsRefused() throws {
        let path = DaemonProcess.temporaryDirectory("trust") + "/data"
        mkdir(path, 0o700)
        chmod(path, 0o777)
        let message = try #require(Self.refusal(path))
        #expect(message.contains("writable by group or others (mode 0777)"))
        #expect(message.contains("chmod 700 \(path)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty, "nothing made in it")
        chmod(path, 0o775)
        #expect(Self.refusal(path) != nil, "group-writable too")
        chmod(path, 0o755)
        #expect(Self.refusal(path) == nil, "readable by others is the user's choice")
    }

    @Test func aDirectoryOfAnotherUserIsRefused() throws {
        guard getuid() == 0 else { return }   // chown to another uid needs root
        let path = DaemonProcess.temporaryDirectory("trust") + "/data"
        mkdir(path, 0o700)
        #expect(chown(path, Self.otherUID, Self.otherUID) == 0)
        let message = try #require(Self.refusal(path))
        #expect(message.contains("belongs to uid \(Self.otherUID)"))
    }

    @Test func aDocumentsDirectoryOpenToOthersIsRefused() throws {
        let path = try Self.madeDataDirectory()
        chmod(path + "/documents", 0o777)
        #expect(Self.refusal(path)?.contains("the documents directory") == true)
    }

    @Test func aLockThatIsASymbolicLinkIsNotFollowed() throws {
        let path = try Self.madeDataDirectory()
        let victim = FileSystem.directory(of: path) + "/profile"
        try "export PATH=/usr/bin\n".write(toFile: victim, atomically: false, encoding: .utf8)
        unlink(path + "/lock")
        try FileManager.default.createSymbolicLink(atPath: path + "/lock", withDestinationPath: victim)
        let message = try #require(Self.refusal(path))
        #expect(message.contains("is a symbolic link"))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "export PATH=/usr/bin\n", "the target is not truncated")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path + "/lock") == victim)
    }

    @Test func aLockHardLinkedToAnotherFileIsRefused() throws {
        let path = try Self.madeDataDirectory()
        let victim = FileSystem.directory(of: path) + "/profile"
        try "keep\n".write(toFile: victim, atomically: false, encoding: .utf8)
        chmod(victim, 0o600)
        unlink(path + "/lock")
        #expect(link(victim, path + "/lock") == 0)
        #expect(Self.refusal(path)?.contains("hard links") == true)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep\n")
    }

    @Test func aKeyReadableByOthersIsRefusedAndLeftAsItIs() throws {
        let path = try Self.madeDataDirectory()
        let key = path + "/identity"
        let before = try Data(contentsOf: URL(fileURLWithPath: key))
        chmod(key, 0o644)
        let message = try #require(Self.refusal(path))
        #expect(message.contains("open to group or others (mode 0644)"))
        #expect(message.contains("chmod 600 \(key)"))
        #expect(Self.mode(key) == 0o644, "refused, not re-permissioned")
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == before, "and not replaced")
        chmod(key, 0o600)
        #expect(try Self.open(path).identity.rawRepresentation == [UInt8](before))
    }

    @Test func aPlantedKeyOfAnotherUserIsRefused() throws {
        guard getuid() == 0 else { return }
        let path = try Self.madeDataDirectory()
        #expect(chown(path + "/identity", Self.otherUID, Self.otherUID) == 0)
        #expect(Self.refusal(path)?.contains("belongs to uid \(Self.otherUID)") == true)
    }

    @Test(arguments: ["identity", "replica"])
    func aKeyOrReplicaThatIsASymbolicLinkIsNotFollowed(_ name: String) throws {
        let path = try Self.madeDataDirectory()
        let target = FileSystem.directory(of: path) + "/elsewhere"
        try FileManager.default.moveItem(atPath: path + "/" + name, toPath: target)
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: path + "/" + name, withDestinationPath: target)
        #expect(Self.refusal(path)?.contains("is a symbolic link") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
    }

    @Test func aDocumentPlantedByAnotherUserIsSkipped() throws {
        guard getuid() == 0 else { return }
        let path = try Self.madeDataDirectory()
        do {
            let store = try Self.open(path)
            store.create(uri: "planted", id: 7, initial: [])
            store.commit()
        }
        let planted = try #require(try FileManager.default.contentsOfDirectory(atPath: path + "/documents").first)
        #expect(chown(path + "/documents/" + planted, Self.otherUID, Self.otherUID) == 0)
        let capture = LogCapture()
        let store = try DocumentStore(path: path, logger: capture.logger)
        #expect(store.loadDocuments().isEmpty)
        #expect(capture.all.contains { $0.contains("belongs to uid \(Self.otherUID)") }, "\(capture.all)")
    }

    /// Through the real binary: the default data directory open to others stops the daemon
    /// with the fix in its message, instead of running with documents in memory.
    @Test func theDaemonRefusesAnInsecureDefaultDataDirectory() throws {
        let home = DaemonProcess.temporaryDirectory("trust-home")
        mkdir(home + "/quire", 0o700)
        chmod(home + "/quire", 0o777)
        let daemon = try DaemonProcess(environment: ["XDG_DATA_HOME": home])
        #expect(daemon.waitForExit() != 0)
        #expect(daemon.log.contains("chmod 700 \(home)/quire"), "\(daemon.log)")
        #expect(Self.mode(home + "/quire") == 0o777)
        #expect(!FileManager.default.fileExists(atPath: home + "/quire/lock"))
    }
}
