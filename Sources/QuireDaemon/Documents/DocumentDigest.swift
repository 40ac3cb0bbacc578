import Crypto
import ReplicatingTypes

/// A short fingerprint of what a copy of a document holds, for daemons to compare on a live link
/// (protocol/peer.md, *Repair*).
///
/// Model: SHA-256, cut to 16 bytes, over the version vector (every replica with the number of its
/// elements this copy has, sorted by replica) and the IDs of the visible elements as maximal
/// ranges in document order.
///
/// Guarantees: two copies of one document that hold the same elements with the same ones removed
/// have the same digest, however their storage is laid out and whichever tombstones each has
/// dropped (a dropped tombstone stays counted and stays invisible). Two copies that differ in an
/// insertion (their version vectors differ) or in a removal (their visible sets differ) have
/// different digests, barring a collision of the hash (2^-64 for a given pair).
struct DocumentDigest: Equatable, Sendable {
    /// The 16 bytes.
    let bytes: [UInt8]

    static let byteCount = 16

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The digest of `text`. - Complexity: O(runs + replicas log replicas)
    init(of text: ReplicatingText) {
        let version = text.versionVector.counts.sorted { $0.key < $1.key }
        let visible = text.scalars.visibleIDs
        // Every value as 8 big-endian bytes, hashed in one go.
        var words: [UInt64] = []
        words.reserveCapacity(1 + version.count * 2 + visible.count * 3)
        words.append(UInt64(version.count).bigEndian)
        for (replica, count) in version {
            words.append(replica.rawValue.bigEndian)
            words.append(count.bigEndian)
        }
        for range in visible {
            words.append(range.start.replica.rawValue.bigEndian)
            words.append(range.start.counter.bigEndian)
            words.append(range.count.bigEndian)
        }
        bytes = words.withUnsafeBytes { Array(SHA256.hash(data: $0).prefix(Self.byteCount)) }
    }

    /// The digest as 32 lowercase hex digits (how it travels).
    var hex: String { Hex.encode(bytes) }

    /// A digest from its 32 hex digits; nil for anything else.
    init?(hex: String) {
        guard hex.utf8.count == 2 * Self.byteCount, let bytes = Hex.decode(hex, count: Self.byteCount) else { return nil }
        self.bytes = bytes
    }
}

extension SharedDocument {
    /// The digest of the document as it is now, computed once per change.
    /// - Complexity: O(1) when the document did not change since the last call, else O(runs)
    var digest: DocumentDigest {
        if let cached = cachedDigest, cached.revision == revision { return cached.digest }
        let digest = DocumentDigest(of: text)
        cachedDigest = (revision, digest)
        return digest
    }
}
