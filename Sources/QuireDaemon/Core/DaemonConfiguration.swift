/// Settings fixed at start-up (`Daemon.Configuration`): the bounds every part holds input to,
/// the peer handshake's limits and timers, and what this daemon calls itself.
public struct DaemonConfiguration: Sendable {
    /// Daemon edits carry a text hash only for documents up to this many scalars (hashing is O(n)).
    public var hashLimit: Int
    public var maximumFrameBytes: Int
    /// JSON nested deeper than this is a parse error.
    public var maximumNestingDepth: Int
    public var serverVersion: String
    /// The secret peers prove they know; peering is refused without one.
    public var peerSecret: [UInt8]?
    /// This daemon's user, shown to peers. Unless `userNameIsExplicit`, the name the first
    /// editor gives at `initialize` replaces it.
    public var userName: String
    public var userNameIsExplicit = false
    public var maximumPeerFrameBytes = 16 << 20
    /// Before a peer has authenticated: the largest frame, how long the handshake may take
    /// (seconds), and how many links may be handshaking at once (more are refused at once).
    public var maximumHandshakeFrameBytes = 4096
    public var peerHandshakeTimeout: Double = 10
    public var maximumUnauthenticatedLinks = 16
    /// Presence messages applied per link and second, and in one burst; more wait (coalesced).
    public var presencePerSecond: Double = 200
    public var presenceBurst: Double = 400
    /// Editors' presence entries (one per editor and document) one link may bring in all, across
    /// documents (1,024 per document is the bound within one); more cut the link.
    public var maximumPeerPresencesPerLink = 16_384
    /// A peer that connected here must send its hello within this many seconds.
    public var peerHelloTimeout: Double = 2
    /// Incoming links from one address that may be handshaking at once.
    public var maximumHandshakesPerAddress = 4
    /// Authenticated links others made that may be up at once, in all and from one address; and
    /// links of one peer key and scope (past it the oldest goes) (`PeerLinks.refusal(ofEstablished:)`).
    public var maximumIncomingPeerLinks = 256
    public var maximumPeerLinksPerAddress = 32
    public var maximumLinksPerPeer = 4
    /// When not empty, only peers whose identity key has one of these fingerprints
    /// (`PeerIdentity.normalized`) are accepted.
    public var trustedPeerFingerprints: Set<String> = []
    /// Failed peer attempts are told to editors at most once per this many seconds; the
    /// rest in one summary.
    public var peerFailureSummaryInterval: Double = 10
    public var maximumOperationsPerFrame = 10_000
    /// Operations waiting for anchors that have not arrived; a peer that exceeds it is cut off.
    public var maximumBufferedOperations = 10_000
    /// Documents a daemon holds at most; a peer that would create more is cut off.
    public var maximumDocuments = 100_000
    /// A scope's quota (one project, or the documents shared by name; protocol/peer.md,
    /// *Bounds*): what its documents may hold together before a peer may add more. A peer whose
    /// frame would take them past it is cut off before anything of the frame is allocated or
    /// written. Twice what `quire share` shares at most (20,000 files, 256 MiB), so an honest
    /// project and its history fit; `--peer-quota-documents` and `--peer-quota-characters`.
    public var maximumDocumentsPerScope = 50_000
    public var maximumElementsPerScope = 1 << 29
    /// Handshakes incoming links may start (`HandshakeRate`): per second and in one burst, from
    /// one address and from all; past either a connection is closed before any key exchange.
    /// A host a peer authenticated from before is held to its own address's rate only.
    public var handshakesPerSecondPerAddress: Double = 4
    public var handshakeBurstPerAddress: Double = 16
    public var handshakesPerSecond: Double = 32
    public var handshakeBurst: Double = 64
    /// What one peer may make this daemon hold (protocol/peer.md, *Bounds*); a peer whose
    /// frame breaks one is cut off before anything of that frame is applied, logged or relayed.
    /// Lamport counters: a counter past the document's clock here at most this far past the
    /// elements the copy would hold (an honest clock never passes them), and never past the
    /// ceiling (which leaves the local editors 2^62 counters).
    public var maximumLamportLead: UInt64 = 1 << 32
    public var maximumLamportClock: UInt64 = 1 << 62
    /// Elements (characters, removed or not) a frame may add to a document, and a document
    /// may hold in all (each costs an index entry whatever its content).
    public var maximumNewElementsPerFrame = 1 << 22
    public var maximumElementsPerDocument = 1 << 24
    /// Replicas a frame may add to a document, and a document may name in all.
    public var maximumNewReplicasPerFrame = 64
    public var maximumReplicasPerDocument = 1_024
    /// Epochs (retiring rounds) a peer may name, across the documents it asks this daemon to
    /// rebase, on one link (1,024 per document otherwise allowed a billion per link).
    public var maximumStaleEpochsPerLink = 65_536
    /// Entries of one document list (a link's first list names every document of its scope).
    public var maximumDocumentsPerList = 50_000
    /// Live output (edits as they are made, presence, rounds) waiting for a peer that has not
    /// read it yet; past this the link is cut, so a peer that does not read costs at most this
    /// much. Catch-up (what a peer lacks after a handshake or a repair, a document sent whole)
    /// is not counted: it is written only while fewer than `catchUpLowWaterBytes` wait, so
    /// it goes at the pace the peer reads, costing at most that plus one frame.
    public var maximumUnsentPeerBytes = 8 << 20
    public var catchUpLowWaterBytes = 1 << 20
    /// A holder of a document not linked with for longer than this (seconds) stops holding
    /// its tombstones back; it rebases onto a state when it returns.
    public var holderHorizon: Double = 30 * 24 * 3600
    /// What the texts of editor views pushed out of one document may take (`DormantViews`):
    /// bytes and views; past either the oldest go. Probes that open and leave cost memory
    /// here, never a returning editor's merge.
    public var maximumDetachedViewBytesPerDocument = 8 << 20
    public var maximumDetachedViewsPerDocument = 4_096
    /// Seconds a restarted daemon's reply to a reopen may wait for the configured peers'
    /// first catch-up of the document (`ReopenWaits`); 0 answers at once.
    public var reopenCatchUpWait: Double = 2

    public init(hashLimit: Int = 1 << 20, maximumFrameBytes: Int = 8 << 20, maximumNestingDepth: Int = 64, serverVersion: String = "0.6.0",
                peerSecret: [UInt8]? = nil, userName: String = "quire") {
        self.peerSecret = peerSecret
        self.userName = userName
        self.hashLimit = hashLimit
        self.maximumFrameBytes = maximumFrameBytes
        self.maximumNestingDepth = maximumNestingDepth
        self.serverVersion = serverVersion
    }
}
