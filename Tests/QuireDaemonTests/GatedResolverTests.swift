import NIOCore
import NIOPosix
import Testing
@testable import QuireDaemon

/// The host lookups of outgoing links answer only while the daemon's loop runs.
@Suite struct GatedResolverTests {
    @Test func anOpenGateAnswersBothQueries() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let resolver = GatedResolver(loop: group.next(), gate: ResolverGate())
        let v4 = try resolver.initiateAQuery(host: "127.0.0.1", port: 7070).wait()
        let v6 = try resolver.initiateAAAAQuery(host: "127.0.0.1", port: 7070).wait()
        #expect(v4.map(\.port) == [7070] && v4.first?.ipAddress == "127.0.0.1")
        #expect(v6.isEmpty)
    }

    @Test func aClosedGateFailsALookupAtOnceAndAnUnknownHostFails() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let gate = ResolverGate()
        gate.close()
        let closed = GatedResolver(loop: group.next(), gate: gate)
        #expect(throws: PeerNetworkError.self) { try closed.initiateAQuery(host: "127.0.0.1", port: 1).wait() }
        #expect(throws: PeerNetworkError.self) { try closed.initiateAAAAQuery(host: "127.0.0.1", port: 1).wait() }
        let unknown = GatedResolver(loop: group.next(), gate: ResolverGate())
        #expect(throws: PeerNetworkError.self) { try unknown.initiateAQuery(host: "nosuchhost.invalid", port: 1).wait() }
    }
}
