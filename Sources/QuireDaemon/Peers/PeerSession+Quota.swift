import QuireProtocol
import ReplicatingTypes

/// A scope's quota (protocol/peer.md, *Bounds*; protocol/decisions/peer-security.md, *Quotas*):
/// the documents of one project, or the documents shared by name, may hold together at most
/// `maximumDocumentsPerScope` documents and `maximumElementsPerScope` elements before a peer may
/// add more. Each frame that would make a document, or add elements to one, is checked against
/// what the scope holds (`ScopeUsage`) before anything of it is allocated, applied, logged or
/// relayed; a frame past the quota cuts the link with a reason naming the quota, as every other
/// bound does. A frame that adds nothing (removals, operations already held) is never refused,
/// so a scope over its quota (by its own editors' typing) can still shrink and sync.
extension PeerSession {
    /// Why the peer may not make a new document named `uri` here, or nil.
    func documentQuotaViolation(uri: String) -> String? {
        let scope = DocumentScope(uri: uri)
        let limit = daemon.configuration.maximumDocumentsPerScope
        let held = daemon.scopeUsage.totals(of: scope).documents
        guard held >= limit else { return nil }
        return "the quota of \(scope) is \(limit) documents, and it holds \(held): "
            + "no new document \"\(DocumentName.displayed(uri))\" is taken from a peer (--peer-quota-documents)"
    }

    /// Why letting the document named `uri` go from what it stores here (0 when it is new) to
    /// storing `elements` elements (`ScopeUsage.storedElements`) breaks its scope's quota, or nil. `isNew`: no copy of it is held
    /// here yet (a new document must also fit the document quota).
    /// - Complexity: O(1)
    func elementQuotaViolation(uri: String, isNew: Bool, elements: UInt64) -> String? {
        if isNew, let violation = documentQuotaViolation(uri: uri) { return violation }
        let usage = daemon.scopeUsage
        let before = isNew ? 0 : usage.elements(of: uri)
        guard elements > before else { return nil }
        let scope = DocumentScope(uri: uri)
        let held = usage.totals(of: scope).elements
        let others = held - Swift.min(held, before)
        let (after, overflow) = others.addingReportingOverflow(elements)
        let limit = UInt64(Swift.max(0, daemon.configuration.maximumElementsPerScope))
        guard overflow || after > limit else { return nil }
        return "the quota of \(scope) is \(limit) characters (removed ones included), and it holds \(held): "
            + "\(elements - before) more for \"\(DocumentName.displayed(uri))\" would pass it (--peer-quota-characters)"
    }
}
