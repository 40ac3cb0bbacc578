import QuireProtocol

/// Roles on the data path (protocol/decisions/roles.md, *Enforcement*; protocol/peer.md,
/// *Roles*): a link whose peer's key may not write in the link's project (`ProjectWriteRule`)
/// changes nothing of it here. Its operations and states are not applied, so they are not relayed
/// and reach no daemon further along a chain; its document lists make no copies here; its tree
/// operations and file formats are not taken (`ProjectService.receiveProjectFrame` asks
/// `mayChange`). Nothing of a document flows from a reader to anyone. What this daemon
/// has still goes to it (delta sync, states, repair), and so does presence both ways. The general
/// scope has no roles.
extension PeerSession {
    /// Why the peer may not change what this link carries (for the log), or nil when it may.
    /// Asked at every frame, so a change of role takes effect at the next one.
    var writeRefusal: String? { daemon.writeRule.peerRefusal(link.peerKey, on: link.scope) }

    /// Whether what the peer sends of `subject` (a document's name, or a project's tree) may
    /// change it here. When not, says so in the log once per link and subject (`what`: what
    /// was refused), not per frame. At most `maximumRefusedSubjects` subjects are remembered (and
    /// logged): a reader sending writes to ever new names (each a valid document name it need
    /// not hold) would otherwise grow the set, and the log, by a kilobyte a frame for as long as
    /// the link lives; past that, every refusal is dropped without a word.
    func mayChange(_ subject: String, what: String) -> Bool {
        guard let refusal = writeRefusal else { return true }
        guard refusedWrites.count < Self.maximumRefusedSubjects else { return false }
        if refusedWrites.insert(subject).inserted {
            let last = refusedWrites.count == Self.maximumRefusedSubjects
                ? "; that is \(Self.maximumRefusedSubjects) refused here, every further write from this link is dropped without a word"
                : " (more of it from this link is dropped without a word)"
            logger.warning("peer link \(id): \(what) of \(DocumentName.displayed(subject)) not applied nor relayed: \(refusal)\(last)")
        }
        return false
    }

    /// The subjects a link's refused writes are remembered (and logged) for.
    static let maximumRefusedSubjects = 1_000
}
