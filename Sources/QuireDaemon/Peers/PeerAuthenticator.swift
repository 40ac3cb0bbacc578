import Crypto

/// Proves knowledge of the shared secret without sending it: each side answers the other's
/// random challenge with an HMAC-SHA256 over both challenges and its own replica ID, so a proof
/// can be neither replayed on another link nor reflected back to its sender.
struct PeerAuthenticator {
    let key: SymmetricKey

    init(secret: [UInt8]) {
        key = SymmetricKey(data: secret)
    }

    /// What we send: our answer to `theirNonce`.
    func proof(theirNonce: String, ourNonce: String, ourReplica: UInt64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(Self.message(theirNonce, ourNonce, ourReplica).utf8), using: key)
        return Self.hex(Array(mac))
    }

    /// Whether `proof` is the peer's correct answer to `ourNonce` (constant-time comparison).
    func verify(_ proof: String, ourNonce: String, theirNonce: String, theirReplica: UInt64) -> Bool {
        guard let bytes = Self.bytes(fromHex: proof) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: Array(Self.message(ourNonce, theirNonce, theirReplica).utf8), using: key)
    }

    private static func message(_ challenge: String, _ response: String, _ replica: UInt64) -> String {
        "quire-peer-1|\(challenge)|\(response)|\(replica)"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, digits.count <= 256 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i...(i + 1)], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
