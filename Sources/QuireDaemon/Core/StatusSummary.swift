import JSON
import ReplicatingTypes

/// What a status line says, counted once in the daemon so that every client only words it
/// (`quire/status` `summary`, `peer/changed` `linksUp`). May call: the documents and the
/// session and link registries.
struct StatusSummary {
    let documents: any DocumentLookup
    let sessions: SessionRegistry
    let peerLinks: PeerLinks

    /// Links whose handshake is done and that are not closed.
    var establishedLinkCount: Int { peerLinks.links.values.filter(\.isEstablished).count }

    /// `quire/status` `summary`: what a status line says, counted once here so that every client
    /// only words it. `editors`, `documents`, `links` and `linksUp` (established) are counts;
    /// `notYetSent` the elements established peers are not known to have (`behind`, summed: 0
    /// means in sync with every linked peer); `removedKept` the removed characters kept for peers;
    /// `people` everyone else in a document here, by name, with the documents they are in: editors
    /// of this daemon (other than `session`) and the editors of peers whose cursors are shown.
    func json(for session: any EditorEndpoint) -> JSONValue {
        let established = peerLinks.established
        var documentsByPerson: [String: Set<String>] = [:]
        for other in sessions.inOrder where other.id != session.id && other.isRunning {
            for uri in other.openDocuments { documentsByPerson[other.user.name, default: []].insert(uri) }
        }
        for document in documents.documents.values {
            for presence in document.peerPresences.values where !presence.selection.selections.isEmpty {
                documentsByPerson[presence.selection.user.name, default: []].insert(document.uri)
            }
        }
        let people: [JSONValue] = documentsByPerson.sorted { $0.key < $1.key }.map { name, uris in
            ["name": .string(name), "documents": .array(uris.sorted().map(JSONValue.string))]
        }
        let removedKept = documents.documents.values.filter(\.everShared).reduce(0) { $0 + $1.text.scalars.tombstoneCount }
        return [
            "editors": .integer(Int64(sessions.sessions.count)),
            "documents": .integer(Int64(documents.documents.count)),
            "links": .integer(Int64(peerLinks.links.count)),
            "linksUp": .integer(Int64(established.count)),
            "notYetSent": .integer(Int64(established.reduce(0) { $0 + $1.behind })),
            "removedKept": .integer(Int64(removedKept)),
            "people": .array(people),
        ]
    }
}
