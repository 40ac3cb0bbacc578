import ReplicatingTypes

/// A document's link to a file on disk: where it is, and what Quire last knew the file to hold.
///
/// Guarantees: when `hash` matches the file's SHA-256, the file holds the text of `base` (the
/// document state Quire last read from it or wrote to it, or an editor saved), so a file whose
/// hash differs was changed outside Quire by exactly the difference from `base`'s text.
struct FileBinding {
    var path: String
    /// SHA-256 (hex) of the file's bytes when Quire last read or wrote it; nil when it did not exist.
    var hash: String?
    /// The document state whose text the file held then.
    var base: ReplicatingText
}
