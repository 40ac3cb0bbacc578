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

extension Daemon {
    /// Links whose handshake is done and that are not closed.
    var establishedLinkCount: Int { links.values.filter { $0.state == .established }.count }

    /// `quire/status` `summary`: what a status line says, counted once here so that every client
    /// only words it. `editors`, `documents`, `links` and `linksUp` (established) are counts;
    /// `notYetSent` the elements established peers are not known to have (`behind`, summed: 0
    /// means in sync with every linked peer); `removedKept` the removed characters kept for peers;
    /// `people` everyone else in a document here, by name, with the documents they are in: editors
    /// of this daemon (other than `session`) and the editors of peers whose cursors are shown.
    func statusSummary(for session: EditorSession) -> JSONValue {
        let established = links.values.filter { $0.state == .established }
        var documentsByPerson: [String: Set<String>] = [:]
        for other in sessions.values where other.id != session.id && other.state == .running {
            for uri in other.openDocuments { documentsByPerson[other.user.name, default: []].insert(uri) }
        }
        for document in documents.values {
            for presence in document.peerPresences.values where !presence.selection.selections.isEmpty {
                documentsByPerson[presence.selection.user.name, default: []].insert(document.uri)
            }
        }
        let people: [JSONValue] = documentsByPerson.sorted { $0.key < $1.key }.map { name, uris in
            ["name": .string(name), "documents": .array(uris.sorted().map(JSONValue.string))]
        }
        let removedKept = documents.values.filter(\.everShared).reduce(0) { $0 + $1.text.scalars.tombstoneCount }
        return [
            "editors": .integer(Int64(sessions.count)),
            "documents": .integer(Int64(documentList.count)),
            "links": .integer(Int64(links.count)),
            "linksUp": .integer(Int64(established.count)),
            "notYetSent": .integer(Int64(established.reduce(0) { $0 + $1.behind })),
            "removedKept": .integer(Int64(removedKept)),
            "people": .array(people),
        ]
    }
}
