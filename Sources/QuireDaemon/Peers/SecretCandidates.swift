import QuireProtocol

/// How an accepting side that holds several secrets finds the connector's (protocol/peer.md,
/// *Handshake*, *Several secrets*): the connector's first sealed frame (its proof) opens under
/// the frame key of its secret only, and the proof in it verifies under that secret's proof key
/// only.
///
/// Guarantees: every candidate is tried (the frame opened, one key derivation each, and where it
/// opens the whole agreement derived and the proof checked; the checks in constant time:
/// ChaCha20-Poly1305's tag and `HMAC.isValidAuthenticationCode`), so the cost is bounded by the
/// number of secrets held.
/// The one that opens and verifies is chosen; failing that, the first that opens (the proof's
/// own check then says why it fails); none that opens: nil (a wrong secret).
enum SecretCandidates {
    struct Choice {
        var index: Int
        var agreement: PeerHandshake.Agreement
        /// The opener past this frame (its counter moved on).
        var opener: FrameOpener
        /// The frame's plaintext body.
        var plain: [UInt8]
    }

    static func choose(in exchange: PeerHandshake.Exchange, firstSealedFrame body: [UInt8]) -> Choice? {
        var verified: Choice?
        var openedOnly: Choice?
        for index in 0..<exchange.secretCount {
            var opener = exchange.opener(at: index)
            guard let plain = try? opener.open(body) else { continue }
            let candidate = exchange.agreement(at: index)
            var proves = false
            if case .proof(let json)? = try? PeerFrame.decode(plain), let proof = try? HandshakeMessage.Proof(json: json) {
                proves = candidate.verifyTheirs(proof.proof)
            }
            let choice = Choice(index: index, agreement: candidate, opener: opener, plain: plain)
            if proves, verified == nil { verified = choice }
            if openedOnly == nil { openedOnly = choice }
        }
        return verified ?? openedOnly
    }
}
