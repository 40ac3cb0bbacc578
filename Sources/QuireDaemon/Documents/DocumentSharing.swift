import JSON
import ReplicatingTypes

/// Which peer daemons hold a document, and where its copies stand after rounds that retired
/// holders gone too long (protocol/decisions/tombstones.md). Kept in the document's
/// `document.json`.
///
/// Guarantees: a retired holder is no longer a holder; `epochs` only grows (a copy that took
/// part in, or was rebased onto, a retiring round keeps that round's ID).
struct DocumentSharing: Equatable {
    /// Holders and when this daemon last had a link with each (seconds since 1970).
    var holders: [ReplicaID: Double] = [:]
    /// Holders retired by a retiring round, with that round's ID: their copies predate tombstones
    /// that may be gone, so they get this daemon's state to rebase onto, never operations.
    var retired: [ReplicaID: String] = [:]
    /// The retiring rounds this copy includes.
    var epochs: Set<String> = []

    init() {}

    init(json: JSONValue?) {
        holders = Self.holderTimes(json?["holders"])
        for (key, value) in json?["retired"]?.objectValue ?? [:] {
            if let replica = UInt64(key), let round = value.stringValue { retired[ReplicaID(replica)] = round }
        }
        epochs = Set((json?["epochs"]?.arrayValue ?? []).compactMap(\.stringValue))
    }

    var json: JSONValue {
        var retiredRounds: [String: JSONValue] = [:]
        for (replica, round) in retired { retiredRounds[String(replica.rawValue)] = .string(round) }
        return ["holders": Self.json(holderTimes: holders), "retired": .object(retiredRounds), "epochs": .array(epochs.sorted().map { .string($0) })]
    }

    /// Holders with when each was last linked with, as JSON: `{replica: whole seconds}` (as in
    /// `document.json` and stability round echoes).
    static func json(holderTimes: [ReplicaID: Double]) -> JSONValue {
        var times: [String: JSONValue] = [:]
        for (replica, seconds) in holderTimes { times[String(replica.rawValue)] = .integer(wholeSeconds(seconds)) }
        return .object(times)
    }

    /// `seconds` as whole seconds, without trapping: not a number or negative gives 0, and what
    /// does not fit `Int64` (`Double(Int64.max)` is 2^63, one past it) gives the largest that does.
    static func wholeSeconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        let whole = seconds.rounded(.down)
        return whole < 9_223_372_036_854_775_808.0 ? Int64(whole) : Int64.max
    }

    /// The holders and times in `json` (see `json(holderTimes:)`); entries that are not such are
    /// left out. Times are kept within a plausible window: none before 1970, none after `notAfter`
    /// (a peer's echo is read with the present as `notAfter`: a holder cannot have been linked
    /// with in the future, and a time from the far future would keep it a holder forever).
    static func holderTimes(_ json: JSONValue?, notAfter: Double = .greatestFiniteMagnitude) -> [ReplicaID: Double] {
        var times: [ReplicaID: Double] = [:]
        for (key, value) in json?.objectValue ?? [:] {
            if let replica = UInt64(key), let seconds = value.integerValue {
                times[ReplicaID(replica)] = Swift.min(Swift.max(0, Double(seconds)), notAfter)
            }
        }
        return times
    }

    /// Notes a link with `holder` now; a retired holder stays retired until it has rebased.
    mutating func heard(from holder: ReplicaID, at seconds: Double) {
        guard retired[holder] == nil else { return }
        holders[holder] = Swift.max(holders[holder] ?? 0, seconds)
    }
}
