import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix

/// Looks up the host of an outgoing peer or relay connection (`--connect host:port`, `--relay`)
/// on a thread of its own, as SwiftNIO's own resolver does, but hands the answer to the event
/// loop only through a `ResolverGate`: once the daemon closes the gate (as it stops, before its
/// event loop shuts down), a lookup still under way is failed at once and its late answer is
/// dropped. SwiftNIO's resolver would complete it on a loop already shut down ("Cannot schedule
/// tasks on an EventLoop that has already shut down"). One per connection attempt (the A and
/// AAAA queries share one `getaddrinfo`).
final class GatedResolver: Resolver, @unchecked Sendable {
    private let gate: ResolverGate
    private let v4: EventLoopPromise<[SocketAddress]>
    private let v6: EventLoopPromise<[SocketAddress]>
    private let lock = NSLock()
    private var started = false

    init(loop: EventLoop, gate: ResolverGate) {
        self.gate = gate
        v4 = loop.makePromise()
        v6 = loop.makePromise()
    }

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        start(host: host, port: port)
        return v4.futureResult
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        start(host: host, port: port)
        return v6.futureResult
    }

    /// A blocking `getaddrinfo` cannot be stopped; its answer is dropped by the gate if unwanted.
    func cancelQueries() {}

    private func start(host: String, port: Int) {
        let first = lock.withLock {
            defer { started = true }
            return !started
        }
        guard first, gate.admit(self) else { return }
        DispatchQueue.global().async { [self] in
            let result = Self.lookup(host: host, port: port)
            // Both answers in one tick of the loop, as SwiftNIO's own resolver gives them.
            gate.deliver(self) { v4.futureResult.eventLoop.execute { self.settle(result) } }
        }
    }

    /// Completes both queries (called once, by the gate).
    fileprivate func settle(_ result: Result<(v4: [SocketAddress], v6: [SocketAddress]), Error>) {
        switch result {
        case .success(let addresses):
            v6.succeed(addresses.v6)
            v4.succeed(addresses.v4)
        case .failure(let error):
            v6.fail(error)
            v4.fail(error)
        }
    }

    /// The IPv4 and IPv6 stream addresses of `host`, by `getaddrinfo`.
    static func lookup(host: String, port: Int) -> Result<(v4: [SocketAddress], v6: [SocketAddress]), Error> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            return .failure(PeerNetworkError("cannot resolve \(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        var v4: [SocketAddress] = [], v6: [SocketAddress] = []
        var entry = list
        while let info = entry?.pointee {
            if let address = info.ai_addr {
                switch info.ai_family {
                case AF_INET:
                    v4.append(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { SocketAddress($0.pointee, host: host) })
                case AF_INET6:
                    v6.append(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { SocketAddress($0.pointee, host: host) })
                default:
                    break
                }
            }
            entry = info.ai_next
        }
        return .success((v4, v6))
    }
}

/// Lets `GatedResolver` answers reach the event loop only while it runs: `close()` (on the
/// loop, before it shuts down) fails every lookup under way and drops every later answer.
/// Thread-safe.
final class ResolverGate: @unchecked Sendable {
    private let lock = NSLock()
    private var open = true
    private var pending: [ObjectIdentifier: GatedResolver] = [:]

    /// Records a lookup about to start; false (failing it at once) when the gate is closed.
    fileprivate func admit(_ resolver: GatedResolver) -> Bool {
        let admitted = lock.withLock {
            guard open else { return false }
            pending[ObjectIdentifier(resolver)] = resolver
            return true
        }
        if !admitted { resolver.settle(.failure(PeerNetworkError("the daemon is stopping"))) }
        return admitted
    }

    /// Runs `settle` (which completes the resolver's promises) if the gate is still open and the
    /// lookup was not failed by `close()`; under the lock, so the loop cannot shut down meanwhile.
    fileprivate func deliver(_ resolver: GatedResolver, settle: () -> Void) {
        lock.withLock {
            guard open, pending.removeValue(forKey: ObjectIdentifier(resolver)) != nil else { return }
            settle()
        }
    }

    /// Fails every lookup under way; later answers are dropped and later lookups fail at once.
    func close() {
        let waiting = lock.withLock {
            open = false
            defer { pending.removeAll() }
            return Array(pending.values)
        }
        for resolver in waiting { resolver.settle(.failure(PeerNetworkError("the daemon is stopping"))) }
    }
}
