import Testing
@testable import QuireDaemon

/// `--listen`, `--connect` and `--relay` addresses from the command line are held to the same
/// rule as an editor's `peer/connect` host: it is logged at every retry and shown to people.
@Suite struct CommandLineAddressTests {
    @Test func hostsAndPortsThatAreFineAreRead() throws {
        #expect(try DaemonServer.hostAndPort("example.org:7070", defaultHost: nil) == ("example.org", 7070))
        #expect(try DaemonServer.hostAndPort("[::1]:7070", defaultHost: nil) == ("::1", 7070))
        #expect(try DaemonServer.hostAndPort("7070", defaultHost: "127.0.0.1") == ("127.0.0.1", 7070))
    }

    @Test(arguments: ["h\u{1B}[31m\nFAKE LOG:7070", "two words:7070", "a\u{202E}b:7070", String(repeating: "h", count: 256) + ":7070"])
    func aHostWithControlsSpacesOrTooLongIsRefused(spec: String) {
        do {
            _ = try DaemonServer.hostAndPort(spec, defaultHost: nil)
            Issue.record("accepted \(spec.debugDescription)")
        } catch {
            let message = "\(error)"
            #expect(message.contains("1 to 255 bytes with no spaces or control characters"), "\(message)")
            #expect(!message.unicodeScalars.contains { $0.value < 0x20 }, "the message shows no control characters")
            #expect(message.count < 200, "the message shows a bounded part of the address")
        }
    }

    @Test func somethingThatIsNoAddressSaysWhatIsExpected() {
        #expect(throws: PeerNetworkError.self) { try DaemonServer.hostAndPort("nowhere", defaultHost: nil) }
        #expect(throws: PeerNetworkError.self) { try DaemonServer.hostAndPort("host:99999", defaultHost: nil) }
    }
}
