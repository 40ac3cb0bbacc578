import Glibc

/// The addresses a partner on another machine may reach this one at, for a join line.
enum HostAddresses {
    /// This machine's non-loopback IPv4 and IPv6 addresses of interfaces that are up (IPv4
    /// first; IPv6 link-local with its zone), then 127.0.0.1; at most 8.
    static func reachable() -> [String] {
        var v4: [String] = [], v6: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0, let first = list {
            defer { freeifaddrs(list) }
            var cursor: UnsafeMutablePointer<ifaddrs>? = first
            while let entry = cursor {
                defer { cursor = entry.pointee.ifa_next }
                let flags = Int32(bitPattern: entry.pointee.ifa_flags)
                guard let address = entry.pointee.ifa_addr, flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
                let family = Int32(address.pointee.sa_family)
                guard family == AF_INET || family == AF_INET6 else { continue }
                var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
                guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
                let text = String(cString: host)
                guard text.utf8.count <= 200 else { continue }
                if family == AF_INET { v4.append(text) } else { v6.append(text) }
            }
        }
        return Array((v4 + v6).prefix(7)) + ["127.0.0.1"]
    }
}
