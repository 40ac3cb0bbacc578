import Foundation
import QuireRelay

/// Raw loopback sockets for the relay tests: connections from a chosen 127.0.0.x source address
/// (so strangers and the real pair count against different per-address bounds), and a proxy
/// that records everything crossing it and can change one byte on demand.
enum RelaySockets {
    /// A TCP connection to 127.0.0.1:`port` from `source` (any 127.0.0.x), or -1.
    static func connect(_ port: Int, from source: String = "127.0.0.1") -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound != 0 || connected != 0 { close(fd); return -1 }
        return fd
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads until `count` bytes came, the peer closed, or `timeout` passed.
    static func read(_ fd: Int32, count: Int, timeout: Double) -> [UInt8] {
        var result: [UInt8] = []
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while result.count < count && Date() < deadline {
            guard poll(&pollfd, 1, 50) > 0 else { continue }
            let n = recv(fd, &buffer, min(buffer.count, count - result.count), 0)
            if n <= 0 { break }
            result += buffer[0..<n]
        }
        return result
    }

    /// Whether the other end closed `fd` within `timeout` seconds (what it sent is read and dropped).
    static func closedByPeer(_ fd: Int32, timeout: Double) -> Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            guard poll(&pollfd, 1, 50) > 0 else { continue }
            if recv(fd, &buffer, buffer.count, 0) <= 0 { return true }
        }
        return false
    }

    /// A listening loopback socket and its port.
    static func listen() -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        Glibc.listen(fd, 16)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A TCP proxy in front of a relay: every connection made to `port` is forwarded to the relay,
/// every byte either way is appended to `captured`, and after `armFlip()` the next bytes coming
/// from the relay have their last byte changed once.
final class RecordingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSCondition()
    private var capturedBytes: [UInt8] = []
    private var flipArmed = false
    private var flipsDone = 0
    private var connectionsSeen = 0
    private var sockets: [Int32] = []

    init(relayPort: Int) {
        (listener, port) = RelaySockets.listen()
        Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                let upstream = RelaySockets.connect(relayPort)
                lock.lock()
                connectionsSeen += 1
                sockets += [client, upstream]
                lock.unlock()
                guard upstream >= 0 else { close(client); continue }
                Thread { self.pump(from: client, to: upstream, fromRelay: false) }.start()
                Thread { self.pump(from: upstream, to: client, fromRelay: true) }.start()
            }
        }.start()
    }

    private func pump(from: Int32, to: Int32, fromRelay: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(from, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            var chunk = Array(buffer[0..<n])
            lock.lock()
            capturedBytes += chunk
            if fromRelay && flipArmed {
                flipArmed = false
                flipsDone += 1
                chunk[chunk.count - 1] ^= 0x01
            }
            lock.broadcast()
            lock.unlock()
            RelaySockets.send(to, chunk)
        }
        shutdown(to, Int32(SHUT_RDWR))
        shutdown(from, Int32(SHUT_RDWR))
    }

    var captured: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return capturedBytes
    }

    var connections: Int {
        lock.lock()
        defer { lock.unlock() }
        return connectionsSeen
    }

    func armFlip() {
        lock.lock()
        flipArmed = true
        lock.unlock()
    }

    var flips: Int {
        lock.lock()
        defer { lock.unlock() }
        return flipsDone
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        lock.lock()
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        lock.unlock()
    }
}
