import JSON
import QuireProtocol
import ReplicatingTypes

/// The handshake's messages as types, decoded in one place with every field checked
/// (protocol/peer.md, *Handshake*). A message that does not decode cuts the link with the
/// reason given here.
enum HandshakeMessage {
    /// Why a handshake message is refused.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// `hello`: the protocol version, a 32-byte nonce, a 32-byte ephemeral X25519 key and the
    /// side's role. Sent in the clear; `json` is kept as sent, for the transcript.
    struct Hello {
        enum Role: String { case connect, accept }
        var nonce: [UInt8]
        var key: [UInt8]
        var role: Role
        var json: JSONValue

        init(json: JSONValue, expectedVersion: Int) throws(Invalid) {
            guard json["protocol"] == .integer(Int64(expectedVersion)) else {
                let theirs = json["protocol"].map { JSONSerializer().string($0) } ?? "none"
                throw Invalid(description: "protocol version mismatch: the peer speaks \(theirs.prefix(20)), this daemon \(expectedVersion)")
            }
            guard let nonce = json["nonce"]?.stringValue.flatMap({ Hex.decode($0, count: 32) }),
                  let key = json["key"]?.stringValue.flatMap({ Hex.decode($0, count: 32) }),
                  let role = json["role"]?.stringValue.flatMap(Role.init(rawValue:)) else {
                throw Invalid(description: "malformed hello")
            }
            self.nonce = nonce
            self.key = key
            self.role = role
            self.json = json
        }

        static func json(version: Int, nonce: [UInt8], key: [UInt8], role: Role) -> JSONValue {
            ["protocol": .integer(Int64(version)), "nonce": .string(Hex.encode(nonce)), "key": .string(Hex.encode(key)), "role": .string(role.rawValue)]
        }
    }

    /// `proof`: the 32-byte proof of the secret bound to this link; `waits` when the sender (an
    /// accepting side that is pinned) shows its identity only after the peer's.
    struct Proof {
        var proof: [UInt8]
        var waits: Bool

        init(proof: [UInt8], waits: Bool) {
            self.proof = proof
            self.waits = waits
        }

        init(json: JSONValue) throws(Invalid) {
            guard let proof = json["proof"]?.stringValue.flatMap({ Hex.decode($0, count: 32) }) else { throw Invalid(description: "malformed proof") }
            self.proof = proof
            waits = json["waits"] == .bool(true)
        }

        var json: JSONValue {
            var object: [String: JSONValue] = ["proof": .string(Hex.encode(proof))]
            if waits { object["waits"] = true }
            return .object(object)
        }
    }

    /// `auth`: the sender's replica (decimal, not 0), user name (cleaned, at most
    /// `DisplayText.maximumNameLength` characters), 32-byte identity key and 64-byte signature
    /// of the transcript.
    struct Auth {
        var replica: ReplicaID
        var user: String
        var identity: [UInt8]
        var signature: [UInt8]

        init(replica: ReplicaID, user: String, identity: [UInt8], signature: [UInt8]) {
            self.replica = replica
            self.user = user
            self.identity = identity
            self.signature = signature
        }

        init(json: JSONValue) throws(Invalid) {
            guard let replicaText = json["replica"]?.stringValue, let replica = UInt64(replicaText), replica != 0,
                  let identity = json["identity"]?.stringValue.flatMap({ Hex.decode($0, count: 32) }),
                  let signature = json["signature"]?.stringValue.flatMap({ Hex.decode($0, count: 64) }) else {
                throw Invalid(description: "malformed auth")
            }
            self.replica = ReplicaID(replica)
            self.user = DisplayText.clean(json["user"]?.stringValue ?? "")
            self.identity = identity
            self.signature = signature
        }

        var json: JSONValue {
            ["replica": .string(String(replica.rawValue)), "user": .string(user), "identity": .string(Hex.encode(identity)),
             "signature": .string(Hex.encode(signature))]
        }
    }
}
