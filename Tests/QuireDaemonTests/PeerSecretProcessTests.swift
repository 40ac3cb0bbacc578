import Crypto
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import QuireTestSupport

/// Issue 20, items 12, 13 and 15 against the real `quire` binary: secrets people choose, secret
/// files others can read, the secret kept from `--connect-command` children, and handshake
/// slots held by idle strangers.
@Suite(.serialized) struct PeerSecretProcessTests {
    /// `quire ARGUMENTS` run to its end: status and stdout plus stderr.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32?, String) {
        let daemon = try DaemonProcess(arguments: arguments, environment: environment)
        daemon.closeInput()
        let status = daemon.waitForExit()
        return (status, daemon.log)
    }

    @Test func quireSecretPrintsSecretsTheDaemonTakes() throws {
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.arguments = ["secret"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect((try? PeerSecret.material(from: text))?.count == 30, "\(text)")
    }

    /// Short or chosen secrets stop the daemon at start, with the reason and what to do.
    @Test(arguments: ["a", "correct horse battery staple", "VGhpcyBpcyBiYXNlNjQgYnV0IG5vdCBhIHF1aXJlIHNlY3JldA"])
    func aWeakSecretIsRefusedAtStart(secret: String) throws {
        let (status, log) = try Self.run(["--listen", "127.0.0.1:0", "--ephemeral"], environment: ["QUIRE_SECRET": secret])
        #expect(status != 0 && status != nil)
        #expect(log.contains("QUIRE_SECRET") && log.contains("run `quire secret`"), "\(log)")
        #expect(!log.contains("listening for peers"))
    }

    /// A secret file open to group or others is refused with the fix; mode 0600 is taken.
    @Test func aSecretFileOthersCanReadIsRefused() throws {
        let directory = DaemonProcess.temporaryDirectory("secret-file")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/secret"
        #expect(FileManager.default.createFile(atPath: path, contents: Data((PeerSecret.generate() + "\n").utf8), attributes: [.posixPermissions: 0o644]))
        let (status, log) = try Self.run(["--listen", "127.0.0.1:0", "--ephemeral", "--secret-file", path])
        #expect(status != 0 && status != nil)
        #expect(log.contains("open to group or others (mode 644)") && log.contains("chmod 600"), "\(log)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--ephemeral", "--secret-file", path, "--no-stdio"])
        #expect(daemon.waitForLog(containing: "listening for peers on") != nil, "\(daemon.log)")
        daemon.process.terminate()
        _ = daemon.waitForExit()
    }

    /// A `--connect-command` runs without QUIRE_SECRET in its environment.
    @Test func aConnectCommandDoesNotInheritTheSecret() throws {
        let directory = DaemonProcess.temporaryDirectory("child-env")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let dump = directory + "/env"
        let daemon = try DaemonProcess(arguments: ["--ephemeral", "--connect-command", "env > '\(dump).tmp'; mv '\(dump).tmp' '\(dump)'; cat"],
                                       environment: PeerProcessTests.secret)
        let ann = TestEditor(process: daemon)
        ann.initialize()
        #expect(SocketSessionTests.waitForFile(dump))
        let environment = (try? String(contentsOfFile: dump, encoding: .utf8)) ?? ""
        #expect(environment.contains("PATH="), "the child ran: \(environment.prefix(200))")
        #expect(!environment.contains("QUIRE_SECRET") && !environment.contains(PeerTestNetwork.secret))
        #expect(ann.request("document/list")["result"] == [])
        PeerProcessTests.shutDown([ann], [daemon])
    }

    /// A TCP connection from `source` (a loopback address) to 127.0.0.1:`port`, or -1.
    static func connect(from source: String, to port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound != 0 || connected != 0 { close(fd); return -1 }
        return fd
    }

    /// Twenty strangers from other addresses send a hello in time and then nothing, holding
    /// every handshake slot for the whole handshake deadline; a peer that linked before from its
    /// address reconnects and links at once, and the editor is served all along.
    @Test func aRealPeerLinksWhileIdleStrangersHoldEverySlot() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        ann.open("doc", text: "shared while strangers wait\n")
        var second: DaemonProcess? = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)", "--user-name", "bob"], environment: PeerProcessTests.secret)
        var bob = TestEditor(process: try #require(second))
        bob.initialize(user: "bob")
        #expect(PeerLinkControlTests.waitForLink(bob, state: "established") != nil)
        PeerProcessTests.shutDown([bob], [try #require(second)])
        second = nil
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !(ann.request("peer/status")["result"]?["links"]?.arrayValue?.isEmpty ?? false) { usleep(20_000) }
        // Four per address from five addresses: sixteen take every slot, the rest are refused.
        var strangers: [Int32] = []
        for n in 0..<20 {
            let fd = Self.connect(from: "127.0.0.\(2 + n / 4)", to: port)
            #expect(fd >= 0)
            let key = Hex.encode(Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
            let nonce = Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
            let hello = PeerFrame.hello(["protocol": .integer(Int64(PeerLink.protocolVersion)), "nonce": .string(nonce), "key": .string(key),
                                         "role": "connect"]).encoded()
            _ = hello.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            strangers.append(fd)
        }
        defer { strangers.forEach { close($0) } }
        #expect(first.waitForLog(containing: "handshakes already under way") != nil, "strangers past the slots are refused")
        let started = Date()
        let again = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)", "--user-name", "bob"], environment: PeerProcessTests.secret)
        bob = TestEditor(process: again)
        bob.initialize(user: "bob")
        #expect(PeerLinkControlTests.waitForLink(bob, state: "established") != nil)
        #expect(Date().timeIntervalSince(started) < 8, "linked before the strangers' handshake deadline (10 s)")
        #expect(first.waitForLog(containing: "handshake slot given to 127.0.0.1") != nil)
        let reply = ann.edit(ann.text.count..<ann.text.count, with: "!")
        #expect(reply["result"]?["editorRevision"] != nil)
        PeerProcessTests.shutDown([ann, bob], [first, again])
    }
}
