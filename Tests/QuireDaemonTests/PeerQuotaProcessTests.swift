import Foundation
import JSON
import Testing
import QuireTestSupport

/// The quotas and the handshake rate on real daemons over TCP: the flags reach the daemon, the
/// peer past a quota is told why, and a stranger reconnecting in a loop is refused by rate.
@Suite(.serialized) struct PeerQuotaProcessTests {
    @Test func aPeerPastTheDocumentQuotaIsCutAndToldWhy() throws {
        let first = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--user-name", "ann", "--peer-quota-documents", "2"],
                                      environment: PeerProcessTests.secret)
        let port = Int(first.waitForLog(containing: "listening for peers on")?.split(separator: ":").last ?? "") ?? 0
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        let second = try DaemonProcess(arguments: ["--user-name", "bob"], environment: PeerProcessTests.secret)
        let bob = TestEditor(process: second)
        bob.initialize(user: "bob")
        for name in ["a", "b", "c", "d"] { _ = bob.open(name, text: "text of \(name)\n") }
        _ = bob.request("peer/connect", ["host": "127.0.0.1", "port": .integer(Int64(port))])
        #expect(first.waitForLog(containing: "the quota of general is 2 documents, and it holds 2: no new document \"c\"") != nil, "the victim logs why")
        // The peer's editor hears why its link closed: the quota and its flag.
        var reasons: [String] = []
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !reasons.contains(where: { $0.contains("--peer-quota-documents") }) {
            _ = bob.request("peer/status")
            reasons += bob.take("peer/changed").compactMap { $0["params"]?["reason"]?.stringValue }
        }
        #expect(reasons.contains { $0.contains("the quota of general is 2 documents") && $0.contains("--peer-quota-documents") }, "\(reasons)")
        let listed = ann.request("document/list")["result"]?.arrayValue?.map { $0["uri"]?.stringValue ?? "" } ?? []
        #expect(listed == ["a", "b"], "nothing past the quota was made: \(listed)")
        PeerProcessTests.shutDown([ann, bob], [first, second])
    }

    @Test func aStrangerReconnectingInALoopIsRefusedByRate() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        let needle = "more peer handshakes from 127.0.0.1 than the 4 a second (bursts of 16)"
        var attempts = 0
        while attempts < 200, !first.log.contains(needle) {
            let fd = PeerSecurityProcessTests.connectTCP(port)
            guard fd >= 0 else { break }
            let header: [UInt8] = [0x00, 0x01, 0x00, 0x00]   // 64 KiB announced: cut at once
            _ = header.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            _ = PeerSecurityProcessTests.closedByDaemon(fd, timeout: 5)
            close(fd)
            attempts += 1
        }
        #expect(first.waitForLog(containing: needle, timeout: 5) != nil, "refused by rate after \(attempts) attempts")
        #expect(attempts >= 16, "the first 16 (the burst) were taken")
        #expect(first.log.components(separatedBy: needle).count - 1 == 1, "logged once per 10 s")
        let reply = ann.request("document/list")
        #expect(reply["result"] != nil, "the editor is served")
        PeerProcessTests.shutDown([ann], [first])
    }
}
