import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// A hostile peer that holds the secret against a real daemon over TCP: the attacker is an
/// in-process daemon whose link frames it writes by hand on the socket (issue 20, items 1 and 6).
@Suite(.serialized) struct HostilePeerProcessTests {
    /// The attacker's end of a TCP link to a real daemon: its own daemon's link does the
    /// handshake and seals frames; reading the socket is up to the test (a peer that stops
    /// reading simply stops calling `pump`).
    final class TCPPeer {
        let fd: Int32
        let daemon: Daemon
        private(set) var link: PeerLink!

        /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks the socket's receive buffer.
        init(port: Int, receiveBuffer: Int32? = nil) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(connected == 0)
            daemon = PeerTestNetwork().makeDaemon(700, secret: PeerProcessTests.secret["QUIRE_SECRET"])
            link = try daemon.makePeerLink(write: { [fd] bytes in
                var sent = 0
                while sent < bytes.count {
                    let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if n <= 0 { return }
                    sent += n
                }
            }, close: {}, incoming: false)
            link.start()
        }

        deinit { close(fd) }

        /// Reads what the daemon sent into the link until `condition` holds (true) or `timeout`.
        @discardableResult
        func pump(timeout: Double = 20, until condition: () -> Bool) -> Bool {
            var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var buffer = [UInt8](repeating: 0, count: 65536)
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if condition() { return true }
                guard poll(&pollfd, 1, 50) > 0 else { continue }
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { return condition() }
                link.receive(buffer[0..<n])
                daemon.flush()
                daemon.commit()
            }
            return condition()
        }
    }

    /// A real daemon whose editor Ann shares "doc" holding `text`, and a hand-driven peer
    /// linked to it over TCP that has received the document (its ID is returned too).
    static func peerLinked(sharing text: String) throws -> (DaemonProcess, TestEditor, TCPPeer, UInt64) {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        ann.open("doc", text: text)
        let peer = try TCPPeer(port: port)
        #expect(peer.pump { peer.daemon.documents["doc"]?.text.string == text }, "the peer linked and got the document")
        let id = try #require(peer.daemon.documents["doc"]?.id)
        return (first, ann, peer, id)
    }

    /// Item 1 against a real daemon: an insertion at Lamport counter 2^64-2 is refused with a
    /// logged reason; the daemon does not trap at the next keystroke and keeps its text.
    @Test func aLamportCounterFarAheadIsRefusedByARealDaemon() throws {
        let (first, ann, peer, id) = try Self.peerLinked(sharing: "acknowledged text\n")
        let attack = ReplicatingArrayOperation<Unicode.Scalar>.insert(ReplicatingArrayInsertion(
            id: ElementID(replica: ReplicaID(999), counter: 0), lamport: UInt64.max - 1, anchor: nil, content: .elements(InsertedElements(["!"]))))
        peer.link.send(.operations(uri: "doc", documentID: id, payload: ReplicatingArrayCoding.encode([attack])))
        #expect(first.waitForLog(containing: "cut off: operations of doc: Lamport counter 18446744073709551614 is beyond") != nil)
        #expect(peer.pump { peer.link.state == .closed }, "the daemon closed the link")
        for i in 0..<5 {
            let reply = ann.edit(ann.text.count..<ann.text.count, with: "\(i)")
            #expect(reply["result"]?["editorRevision"] != nil, "keystroke \(i) acknowledged, no trap")
        }
        #expect(ann.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue == "acknowledged text\n01234")
        #expect(!first.log.contains("Fatal"))
        PeerProcessTests.shutDown([ann], [first])
    }

    /// Item 6: a peer that stops reading while the daemon has documents to send it is cut once
    /// its unsent output passes the limit; the editor is answered all along.
    @Test func aPeerThatDoesNotReadIsCutAndTheEditorIsServed() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        let peer = try TCPPeer(port: port, receiveBuffer: 4096)
        #expect(peer.pump { peer.link.state == .established && peer.daemon.links.values.first?.state == .established })
        // From now on the peer reads nothing (it still sends heartbeats, so it is not cut for
        // silence). Each new document goes to it whole.
        let twoMegabytes = String(repeating: String(repeating: "x", count: 1023) + "\n", count: 2048)
        var cut = false
        for i in 0..<30 where !cut {
            peer.link.send(.heartbeat)
            let reply = ann.open("big\(i)", text: twoMegabytes)
            #expect(reply["result"] != nil, "open \(i) answered")
            cut = first.log.contains("the peer does not read")
        }
        let line = try #require(first.waitForLog(containing: "cut off: the peer does not read"))
        let waiting = Int(line.components(separatedBy: "read: ").last?.split(separator: " ").first ?? "") ?? .max
        #expect(waiting <= 8 << 20, "at most the limit waited for it: \(line)")
        #expect(!first.log.contains("no word from the peer"), "cut for not reading, not for silence")
        #expect(ann.request("document/list")["result"]?.arrayValue?.count ?? 0 >= 1, "the editor is served")
        let links = ann.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        #expect(links.allSatisfy { $0["state"] != "established" }, "the link is gone: \(links)")
        PeerProcessTests.shutDown([ann], [first])
    }

    /// The resident memory of process `pid` in bytes (from /proc), or nil.
    static func residentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes * 1024
    }

    /// Items 3 to 5 against a real daemon, with its memory measured: eight frames of a few dozen
    /// bytes, each a run of 2^26 removed elements (about 800 MB each before the bounds), and
    /// one character from each of 5,000 replicas, leave the daemon's resident memory within a
    /// few megabytes of where it was, and its editor answered within 2 s.
    @Test func amplifyingFramesLeaveMemoryBounded() throws {
        let (first, ann, peer, id) = try Self.peerLinked(sharing: "acknowledged <A1>\n")
        let pid = first.process.processIdentifier
        let before = try #require(Self.residentBytes(of: pid))
        for n in 0..<8 {
            let run = ReplicatingArrayOperation<Unicode.Scalar>.insert(ReplicatingArrayInsertion(
                id: ElementID(replica: ReplicaID(5000 + UInt64(n)), counter: 0), lamport: 10, anchor: nil, content: .removed(count: 1 << 26)))
            peer.link.send(.operations(uri: "doc", documentID: id, payload: ReplicatingArrayCoding.encode([run])))
            if peer.link.state == .closed { break }
        }
        let many = (0..<5_000).map { r in
            ReplicatingArrayOperation<Unicode.Scalar>.insert(ReplicatingArrayInsertion(
                id: ElementID(replica: ReplicaID(90_000 + UInt64(r)), counter: 0), lamport: 11, anchor: nil, content: .elements(InsertedElements(["x"]))))
        }
        if peer.link.state != .closed { peer.link.send(.operations(uri: "doc", documentID: id, payload: ReplicatingArrayCoding.encode(many))) }
        #expect(peer.pump { peer.link.state == .closed }, "the daemon cut the link")
        let started = Date()
        let reply = ann.edit(ann.text.count..<ann.text.count, with: "!")
        #expect(reply["result"]?["editorRevision"] != nil && Date().timeIntervalSince(started) < 2, "the editor is answered within 2 s")
        let after = try #require(Self.residentBytes(of: pid))
        #expect(after - before < 32 << 20, "resident memory grew from \(before >> 20) MB to \(after >> 20) MB")
        #expect(ann.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue == "acknowledged <A1>\n!")
        PeerProcessTests.shutDown([ann], [first])
    }
}
