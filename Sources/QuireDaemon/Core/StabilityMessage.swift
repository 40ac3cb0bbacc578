import ReplicatingTypes

/// `stability`: one wave message of a stability round (`StabilityService`): an `ask`, with the
/// holders it retires, or an `echo` with what the round learned.
/// Decoded from a peer frame by `PeerMessage` (Peers), which checks its bounds: a document name,
/// a decimal ID, a round ID; replica IDs in decimal (others are left out).
struct StabilityMessage {
    enum Phase: String { case ask, echo }

    var uri: String
    var documentID: UInt64
    var round: String
    var phase: Phase
    /// An echo's verdict, and the reason of a failure (cleaned, at most `DisplayText.maximumReasonLength`).
    var ok: Bool
    var reason: String?
    var reached: Set<ReplicaID>
    /// When each holder the sender knows was last linked with (seconds since 1970, not before 0).
    var holders: [ReplicaID: Double]
    /// The holders an ask retires.
    var retire: Set<ReplicaID>
    /// An ask of a forget round (`StabilityRounds`): the document's file is deleted and the
    /// initiator would forget the document.
    var forget: Bool = false
}
