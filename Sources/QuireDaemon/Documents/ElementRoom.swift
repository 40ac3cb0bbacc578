import QuireProtocol
import ReplicatingTypes

/// How many more elements local edits may add to one document: a document may hold at most
/// `Configuration.maximumElementsPerDocument` elements (characters, removed ones included until
/// they are dropped), the bound every peer holds a copy to (`PeerBounds`). A local edit past it
/// would be refused by every peer, and the link cut, forever; so it is refused here instead,
/// with `ResponseError.documentTooLarge`, before anything changes.
///
/// Each element a local insertion adds is a new one (it takes the next counters of a replica of
/// this daemon), so an edit adds exactly the elements its insertions carry, as a peer applying
/// them counts them (`ReplicatingArray.growth(from:)`). Removals add nothing: a document at the
/// bound can always be made smaller.
struct ElementRoom {
    let uri: String
    /// Elements the document holds or is committed to holding (`claimedElementCount`).
    let held: UInt64
    /// The most it may hold.
    let limit: Int

    /// Elements local edits may still add (0 when the document is at or past the bound).
    var remaining: Int {
        let limit = UInt64(Swift.max(0, self.limit))
        return held >= limit ? 0 : Int(clamping: limit - held)
    }

    /// Throws, for the caller to refuse the edit with nothing changed, when `count` more
    /// elements do not fit.
    func check(adding count: Int) throws(ResponseError) {
        guard count > remaining else { return }
        throw .documentTooLarge(uri: uri, elements: held, adding: count, limit: limit)
    }

    /// The elements `operations`, made by a local edit, add to the document they were made in.
    /// - Complexity: O(operations)
    static func newElements(of operations: [ReplicatingArrayOperation<Unicode.Scalar>]) -> Int {
        var total = 0
        for case .insert(let insertion) in operations { total = saturatingAdd(total, insertion.count) }
        return total
    }

    /// At most how many elements applying `changes` to any text can insert: each change's new
    /// text, with the line breaks of a `lines` change (a change inserts at most what it says
    /// the text becomes, and usually much less).
    /// - Complexity: O(the changes' text)
    static func mostInserted(by changes: [WireChange]) -> Int {
        var total = 0
        for change in changes {
            switch change {
            case .full(let text), .range(_, let text):
                total = saturatingAdd(total, text.unicodeScalars.count)
            case .lines(_, let lines):
                total = saturatingAdd(total, lines.count)
                for line in lines { total = saturatingAdd(total, line.unicodeScalars.count) }
            }
        }
        return total
    }

    private static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(Swift.max(0, b))
        return overflow ? .max : sum
    }
}
