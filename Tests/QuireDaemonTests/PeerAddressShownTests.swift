import NIOCore
@testable import QuireDaemon
import Testing

/// How an incoming link's address is shown to people (`peer/changed`, `quire share`'s lines).
@Suite struct PeerAddressShownTests {
    @Test func addressesReadAsHostAndPort() throws {
        #expect(PeerNetwork.shown(try SocketAddress(ipAddress: "127.0.0.1", port: 55992)) == "127.0.0.1:55992")
        #expect(PeerNetwork.shown(try SocketAddress(ipAddress: "::1", port: 7070)) == "[::1]:7070")
        #expect(PeerNetwork.shown(try SocketAddress(ipAddress: "192.168.1.20", port: 1)) == "192.168.1.20:1")
    }
}
