import Foundation
import JSON
import Testing
import QuireTestSupport

/// The attacks of `PeerSecurityTests` that need real sockets: a crowd of idle connections, an
/// oversized handshake frame on TCP, and a capture of a live TCP link.
@Suite(.serialized) struct PeerSecurityProcessTests {
    /// A TCP connection to 127.0.0.1:`port`, or -1.
    static func connectTCP(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 { close(fd); return -1 }
        return fd
    }

    /// Whether the daemon closed `fd` within `timeout` seconds (reads what it sent until EOF).
    static func closedByDaemon(_ fd: Int32, timeout: Double) -> Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            guard poll(&pollfd, 1, 100) > 0 else { continue }
            if read(fd, &buffer, buffer.count) <= 0 { return true }
        }
        return false
    }

    /// Forty strangers connect from one address and say nothing. The daemon refuses those past
    /// its per-address cap at once, cuts the rest at the hello deadline, answers its editor all along, and a real peer
    /// links once they are gone.
    @Test func idleConnectionsNeitherStallTheEditorNorLockOutRealPeers() throws {
        let first = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--user-name", "ann", "--peer-handshake-timeout", "2",
                                                  "--log-level", "info"], environment: PeerProcessTests.secret)
        let port = Int(first.waitForLog(containing: "listening for peers on")?.split(separator: ":").last ?? "") ?? 0
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        ann.open("doc", text: "typed while strangers wait\n")
        let strangers = (0..<40).map { _ in Self.connectTCP(port) }
        defer { strangers.forEach { close($0) } }
        #expect(strangers.allSatisfy { $0 >= 0 })
        #expect(first.waitForLog(containing: "handshakes from 127.0.0.1 already under way") != nil, "connections past the per-address cap are refused")
        // The editor is served while they wait.
        for i in 0..<50 {
            let reply = ann.edit(ann.text.count..<ann.text.count, with: "\(i % 10)")
            #expect(reply["result"]?["editorRevision"] != nil, "edit \(i) acknowledged")
        }
        #expect(first.waitForLog(containing: "within 2 seconds") != nil, "no hello, or no handshake, within 2 seconds")
        #expect(strangers.allSatisfy { Self.closedByDaemon($0, timeout: 5) }, "every stranger is cut off")
        // A real peer now links and gets the document.
        let second = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)", "--user-name", "bob"], environment: PeerProcessTests.secret)
        let bob = TestEditor(process: second)
        bob.initialize(user: "bob")
        #expect(PeerLinkControlTests.waitForLink(bob, state: "established") != nil)
        let link = bob.request("peer/status")["result"]?["links"]?.arrayValue?.first
        #expect(link?["encrypted"] == true)
        #expect(link?["fingerprint"] == ann.request("peer/status")["result"]?["fingerprint"], "bob sees ann's daemon's key")
        #expect(!first.log.contains("Fatal"))
        PeerProcessTests.shutDown([ann, bob], [first, second])
    }

    /// A frame announced larger than the handshake limit is refused at its header, on TCP.
    @Test func anOversizedHandshakeFrameIsCutAtOnce() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let ann = TestEditor(process: first)
        ann.initialize()
        let fd = Self.connectTCP(port)
        defer { close(fd) }
        let header: [UInt8] = [0x01, 0x00, 0x00, 0x00]   // 16 MiB announced
        _ = header.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #expect(Self.closedByDaemon(fd, timeout: 5))
        #expect(first.waitForLog(containing: "exceeds the limit of 4096 before authentication") != nil)
        #expect(ann.request("document/list")["result"] == [])
        PeerProcessTests.shutDown([ann], [first])
    }

    /// Everything that crosses a live TCP link between two daemons, recorded by a relay in the
    /// middle, holds none of the text either person typed.
    @Test func aCaptureOfALiveTCPLinkHoldsNoTypedText() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        ann.open("doc", text: "the launch code is swordfish\n")
        let work = DaemonProcess.temporaryDirectory("capture")
        let capture = work + "/capture.bin", relay = work + "/relay.py"
        try Self.relayScript.write(toFile: relay, atomically: true, encoding: .utf8)
        let second = try DaemonProcess(arguments: ["--connect-command", "python3 '\(relay)' \(port) '\(capture)'", "--user-name", "bob"],
                                       environment: PeerProcessTests.secret)
        let bob = TestEditor(process: second)
        bob.initialize(user: "bob")
        #expect(PeerLinkControlTests.waitForLink(bob, state: "established") != nil)
        #expect(bob.waitForDocument("doc", characters: "the launch code is swordfish\n".unicodeScalars.count))
        bob.open("doc", text: "")
        #expect(bob.string == "the launch code is swordfish\n")
        bob.edit(bob.text.count..<bob.text.count, with: "the vault opens at noon\n")
        ann.edit(0..<0, with: "classified: ")
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        let captured = (try? Data(contentsOf: URL(fileURLWithPath: capture))).map { [UInt8]($0) } ?? []
        #expect(captured.count > 200, "the relay saw the link's bytes: \(captured.count)")
        for secret in ["swordfish", "vault", "classified", "launch", "noon"] {
            #expect(PeerSecurityTests.contains([captured], secret) == false, "\(secret) crossed the link in the clear")
        }
        PeerProcessTests.shutDown([ann, bob], [first, second])
    }

    /// Copies stdin to a TCP connection and the connection to stdout, appending both to a file.
    static let relayScript = """
    import os, socket, sys, threading
    connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    capture = open(sys.argv[2], "ab", buffering=0)
    lock = threading.Lock()
    def record(data):
        with lock:
            capture.write(data)
    def upstream():
        while True:
            data = os.read(0, 65536)
            if not data:
                connection.shutdown(socket.SHUT_WR)
                return
            record(data)
            connection.sendall(data)
    threading.Thread(target=upstream, daemon=True).start()
    while True:
        data = connection.recv(65536)
        if not data:
            break
        record(data)
        os.write(1, data)
    """
}
