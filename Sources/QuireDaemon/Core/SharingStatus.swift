import JSON
import ReplicatingTypes

/// `peer/status` `documents`: for each document a peer ever held, the holders this daemon knows
/// with when it was last linked with each, the holders retired past the horizon, the stability
/// rounds under way here, and the removed characters it still stores and has dropped. What a
/// person asks when tombstones are not going away. May call: the documents and the rounds' state.
struct SharingStatus {
    let documents: any DocumentLookup
    let rounds: StabilityRounds

    func json() -> JSONValue {
        let shared = documents.documents.values.filter(\.everShared).sorted { $0.uri < $1.uri }
        return .array(shared.map { document in
            let holders = document.sharing.holders.sorted { $0.key < $1.key }.map { replica, seconds -> JSONValue in
                ["replica": .string(replica.description), "lastLinked": .integer(Int64(seconds.rounded(.down)))]
            }
            return [
                "uri": .string(document.uri),
                "holders": .array(holders),
                "retired": .array(document.sharing.retired.keys.sorted().map { .string($0.description) }),
                "roundsUnderWay": .integer(Int64(rounds.activeCount(of: document))),
                "tombstones": .integer(Int64(document.text.scalars.tombstoneCount)),
                "dropped": .integer(Int64(document.text.scalars.compactedCount)),
            ]
        })
    }
}
