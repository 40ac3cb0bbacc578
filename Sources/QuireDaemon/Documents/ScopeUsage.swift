import ReplicatingTypes

/// What the documents of each scope (one shared or joined project, or the documents shared by
/// name) hold together: how many documents, and how many elements they store (characters,
/// removed ones included, and those waiting insertions claim: `storedElements`; not the ones a
/// stability round dropped, which cost neither memory nor the log once a snapshot replaced it).
/// The peer links hold a peer to a scope's quota with it (`PeerQuota`, protocol/peer.md,
/// *Bounds*), so a writer turned hostile cannot fill memory and disk with many documents that
/// are each within the per-document bound, and an honest long-lived project whose removed text
/// is dropped does not creep up to the quota with its history.
///
/// Guarantees: kept up to date by `DocumentChanges`, which hears of every document the registry
/// takes in, of every change of one and of every drop of tombstones, so a lookup is O(1) and
/// never walks the documents; a document is counted once, under its name (a document that takes
/// the place of another under the same name replaces its count); a document the registry forgets
/// (`DocumentRegistry.forget`) stops counting at once.
final class ScopeUsage {
    /// What one scope's documents hold together.
    struct Totals: Equatable {
        var documents = 0
        var elements: UInt64 = 0
    }

    private var perDocument: [String: (scope: DocumentScope, elements: UInt64)] = [:]
    private var totals: [DocumentScope: Totals] = [:]

    /// What the documents of `scope` hold together.
    func totals(of scope: DocumentScope) -> Totals { totals[scope] ?? Totals() }

    /// The elements counted for the document named `uri` (0 when it is not held).
    func elements(of uri: String) -> UInt64 { perDocument[uri]?.elements ?? 0 }

    /// `document` is new here, or changed: counts what it holds now.
    /// - Complexity: O(its replicas), plus O(its waiting insertions) when some wait.
    func note(_ document: SharedDocument) {
        note(uri: document.uri, elements: Self.storedElements(of: document.text.scalars))
    }

    /// What `array` stores or is committed to storing: the elements it claims
    /// (`claimedElementCount`: visible, removed, dropped and waiting) but those dropped.
    static func storedElements(of array: ReplicatingArray<Unicode.Scalar>) -> UInt64 {
        storedElements(claimed: array.claimedElementCount, droppedIn: array)
    }

    /// Of `claimed` elements of a copy, those not dropped from `array` (saturating).
    static func storedElements(claimed: UInt64, droppedIn array: ReplicatingArray<Unicode.Scalar>) -> UInt64 {
        claimed - Swift.min(claimed, UInt64(Swift.max(0, array.compactedCount)))
    }

    /// The document named `uri` holds `elements` now.
    func note(uri: String, elements: UInt64) {
        let scope = DocumentScope(uri: uri)
        var scopeTotals = totals[scope] ?? Totals()
        if let old = perDocument[uri] {
            scopeTotals.elements -= Swift.min(scopeTotals.elements, old.elements)
        } else {
            scopeTotals.documents += 1
        }
        let (sum, overflow) = scopeTotals.elements.addingReportingOverflow(elements)
        scopeTotals.elements = overflow ? .max : sum
        perDocument[uri] = (scope, elements)
        totals[scope] = scopeTotals
    }

    /// The document named `uri` is no longer held (a deleted file's document was forgotten):
    /// neither it nor what it stored counts from now on.
    /// - Complexity: O(1)
    func forget(uri: String) {
        guard let old = perDocument.removeValue(forKey: uri) else { return }
        var scopeTotals = totals[old.scope] ?? Totals()
        scopeTotals.documents -= Swift.min(scopeTotals.documents, 1)
        scopeTotals.elements -= Swift.min(scopeTotals.elements, old.elements)
        totals[old.scope] = scopeTotals.documents == 0 && scopeTotals.elements == 0 ? nil : scopeTotals
    }
}
