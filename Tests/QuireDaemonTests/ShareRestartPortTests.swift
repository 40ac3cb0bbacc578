import Foundation
import Glibc
import QuireTestSupport
import Testing

/// `quire share --listen 127.0.0.1:0` run again after a restart: the port picked the first time is
/// kept in the project's record and taken again while it is free, so the line given out still
/// joins; when another program holds it, a free port is taken and the screen says the line
/// changed (real processes on loopback).
@Suite(.serialized) struct ShareRestartPortTests {
    /// The port of the first `127.0.0.1:PORT` on the screen's "Listening on" line.
    static func port(in screen: String) -> Int? {
        guard let line = screen.split(separator: "\n").first(where: { $0.hasPrefix("Listening on 127.0.0.1:") }) else { return nil }
        return Int(line.dropFirst("Listening on 127.0.0.1:".count).prefix { $0.isNumber })
    }

    static func share(_ root: String, data: String, environment: [String: String]) throws -> (CommandProcess, String) {
        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0", "--data-dir", data], environment: environment)
        let printed = try #require(share.waitForLine { $0.hasPrefix("    quire join ") }, "\(share.stdout) \(share.stderr)")
        return (share, String(printed.dropFirst("    quire join ".count)))
    }

    static func stop(_ process: CommandProcess) {
        process.send(signal: SIGINT)
        #expect(process.waitForExit() == 0, "\(process.stderr)")
    }

    /// Holds a TCP listener on 127.0.0.1:`port` until closed (as another program would, with
    /// SO_REUSEADDR, as servers do); nil when it cannot.
    static func occupy(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        // Connections of the stopped daemon may still be in TIME_WAIT on the port.
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    @Test func aRestartedShareListensOnTheSamePortAndTheSameLineJoinsAgain() throws {
        let root = DaemonProcess.temporaryDirectory("quire-restart") + "/again"
        let expected = try ShareJoinProcessTests.makeProject(at: root)
        let (dataA, environmentA) = ShareJoinProcessTests.side("restart-host")
        let (dataB, environmentB) = ShareJoinProcessTests.side("restart-joiner")

        let (first, line) = try Self.share(root, data: dataA, environment: environmentA)
        let port = try #require(Self.port(in: first.stdout), "\(first.stdout)")
        #expect(!first.stdout.contains("the port this project used before"), "nothing to say the first time: \(first.stdout)")
        Self.stop(first)

        // Started again with the same command: the same port, said so, and the same line.
        let (second, lineAgain) = try Self.share(root, data: dataA, environment: environmentA)
        #expect(Self.port(in: second.stdout) == port, "\(second.stdout)")
        #expect(second.stdout.contains("Listening on 127.0.0.1:\(port) again, the port this project used before"), "\(second.stdout)")
        #expect(lineAgain == line, "the line given out before still works")
        let target = DaemonProcess.temporaryDirectory("quire-restart-joined") + "/copy"
        let join = try CommandProcess(arguments: ["join", line, target, "--data-dir", dataB], environment: environmentB)
        #expect(join.waitForLine(timeout: 60) { $0.contains("files of \"again\" are in") } != nil, "\(join.stdout) \(join.stderr)")
        #expect(waitUntil(timeout: 30) { ShareJoinProcessTests.files(under: target) == expected }, "the trees become byte-identical")
        Self.stop(join)
        Self.stop(second)
        // Again after a partner's connection closed (its port may hold TIME_WAIT connections).
        let (afterJoin, lineAfterJoin) = try Self.share(root, data: dataA, environment: environmentA)
        #expect(Self.port(in: afterJoin.stdout) == port && lineAfterJoin == line, "\(afterJoin.stdout)")
        Self.stop(afterJoin)

        // Another program holds the port: a free one, the screen says so, and its line names it.
        let holder = try #require(Self.occupy(port), "port \(port) could not be held for the test")
        defer { close(holder) }
        let (third, lineMoved) = try Self.share(root, data: dataA, environment: environmentA)
        let moved = try #require(Self.port(in: third.stdout), "\(third.stdout)")
        #expect(moved != port)
        #expect(third.stdout.contains("The port this project used before, 127.0.0.1:\(port), is taken"), "\(third.stdout)")
        #expect(third.stdout.contains("listening on 127.0.0.1:\(moved) instead; partners need the new line."), "\(third.stdout)")
        #expect(lineMoved != line)
        // The new line joins (the partner's daemon knows the project: it follows it again).
        let rejoin = try CommandProcess(arguments: ["join", lineMoved, target, "--data-dir", dataB], environment: environmentB)
        #expect(rejoin.waitForLine(timeout: 60) { $0.contains("files of \"again\" are in") } != nil, "\(rejoin.stdout) \(rejoin.stderr)")
        Self.stop(rejoin)
        Self.stop(third)
    }
}
