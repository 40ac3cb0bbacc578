import Glibc

/// How many handshakes incoming links may start (protocol/peer.md, *Handshake*): a token bucket
/// per source address and one for all addresses, so a stranger on the network cannot make this
/// daemon do key-exchange work in a loop by connecting again as soon as each attempt is cut
/// (the cap on handshakes at once bounds only those under way together).
///
/// An IPv6 address is held to its /64's bucket. Only links from a network address (TCP) are
/// held to it: the peer socket (reachable by this user's own processes only, e.g. ssh) and a
/// daemon's own stdio link are not (`PeerLinks.heldToAddressLimits`).
///
/// Guarantees: a refused attempt takes no token and costs O(1); the buckets of at most
/// `maximumAddresses` addresses are kept (a full bucket is the same as none, and is forgotten
/// first; past that, an address without a bucket is held to the all-addresses rate only, which
/// still bounds the work).
struct HandshakeRate {
    /// Why an attempt is refused.
    enum Refusal: Equatable {
        case address(String)
        case all
    }

    struct Bucket {
        var tokens: Double
        var at: Double
    }

    static let maximumAddresses = 4096
    private var perAddress: [String: Bucket] = [:]
    private var all: Bucket?
    /// When full buckets were last forgotten: at most once a second, so a flood from ever new
    /// addresses does not walk the table on every attempt.
    private var forgotAt = -Double.infinity

    /// Takes a token for a handshake from `host` at `now` (seconds, monotonic), or says why
    /// not. `known`: a peer authenticated from `host` before; it is held to its address's rate
    /// only, so strangers using up the all-addresses rate cannot keep it from reconnecting.
    mutating func take(host: String, known: Bool, now: Double, configuration: DaemonConfiguration) -> Refusal? {
        let host = Self.source(of: host)
        let perSecond = configuration.handshakesPerSecondPerAddress, burst = configuration.handshakeBurstPerAddress
        if perAddress[host] == nil, perAddress.count >= Self.maximumAddresses, now - forgotAt >= 1 {
            forgotAt = now
            forgetFull(now: now, perSecond: perSecond, burst: burst)
        }
        var addressBucket: Bucket?
        if perAddress[host] != nil || perAddress.count < Self.maximumAddresses {
            let bucket = Self.refilled(perAddress[host], now: now, perSecond: perSecond, burst: burst)
            guard bucket.tokens >= 1 else { return .address(host) }
            addressBucket = bucket
        }
        if !known {
            let bucket = Self.refilled(all, now: now, perSecond: configuration.handshakesPerSecond, burst: configuration.handshakeBurst)
            guard bucket.tokens >= 1 else { return .all }
            all = Bucket(tokens: bucket.tokens - 1, at: now)
        }
        if var bucket = addressBucket {
            bucket.tokens -= 1
            perAddress[host] = bucket
        }
        return nil
    }

    /// Whom an address's bucket is for: an IPv6 address's /64 (one host usually holds a whole
    /// /64, so its addresses are one source), any other address itself.
    static func source(of host: String) -> String {
        guard host.contains(":") else { return host }
        var address = in6_addr()
        guard inet_pton(AF_INET6, host, &address) == 1 else { return host }
        let bytes = withUnsafeBytes(of: address) { Array($0.prefix(8)) }
        if bytes.allSatisfy({ $0 == 0 }) { return host }   // ::1, ::ffff:a.b.c.d and the like
        var text = ""
        for pair in stride(from: 0, to: 8, by: 2) {
            text += String(UInt16(bytes[pair]) << 8 | UInt16(bytes[pair + 1]), radix: 16) + ":"
        }
        return text + ":/64"
    }

    /// `bucket` (a full one when nil) with the tokens earned since it was last used.
    private static func refilled(_ bucket: Bucket?, now: Double, perSecond: Double, burst: Double) -> Bucket {
        guard let bucket else { return Bucket(tokens: burst, at: now) }
        let earned = Swift.max(0, now - bucket.at) * perSecond
        return Bucket(tokens: Swift.min(burst, bucket.tokens + earned), at: now)
    }

    /// Forgets the buckets that have filled up again (they are the same as none).
    private mutating func forgetFull(now: Double, perSecond: Double, burst: Double) {
        perAddress = perAddress.filter { Self.refilled($0.value, now: now, perSecond: perSecond, burst: burst).tokens < burst }
    }

    /// Addresses with a bucket kept (for tests).
    var addressesKept: Int { perAddress.count }
}
