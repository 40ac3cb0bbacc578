import QuireProject
import QuireProtocol
import ReplicatingTypes

/// Who is where, for `quire/who`: every person whose cursor this daemon knows, its own editors'
/// sessions and the peers' editors whose presence reached it, with their cursor in each document
/// they have one in, most recent first, placed for the asking editor, and their role in the
/// project of the document they are in now (`at[0]`). Names are shown as they are kept: cleaned
/// on arrival (`initialize`, `PresenceMessage`). May call: the documents, the session registry,
/// the peer links and what each project's roster allows (`ProjectAccess`).
///
/// Roles (protocol/decisions/roles.md, *Roles shown*): this daemon's own editors have its own
/// role; a peer's editor whose presence came on its own daemon's link has that link's key's
/// role; one whose presence was relayed by a third daemon has none shown (its key is not known
/// here: a presence names a replica, the roster names keys); nobody has one in a document of the
/// general scope.
struct WhoIsHere {
    let documents: any DocumentLookup
    let sessions: SessionRegistry
    let links: [Int: any PeerEndpoint]
    let access: (any ProjectAccess)?

    /// The people, sorted by name (then by who they are, so the order is stable), as `asker`
    /// (whose editor counts characters in `encoding`) is to see them.
    func people(for asker: any EditorEndpoint, encoding: PositionEncoding) -> [WhoRequest.Person] {
        var found: [String: Found] = [:]
        for document in documents.documents.values {
            for (sessionID, selection) in document.selections {
                guard let session = sessions.sessions[sessionID], session.isRunning,
                      let place = place(of: selection, number: sessionID, in: document, for: asker, encoding: encoding) else { continue }
                let key = "local:\(sessionID)"
                found[key, default: Found(user: session.user, isSelf: sessionID == asker.id)].places
                    .append((selection.moved, place, .local))
            }
            for (origin, presence) in document.peerPresences {
                guard let place = place(of: presence.selection, number: presence.number, in: document, for: asker, encoding: encoding)
                else { continue }
                let key = "peer:\(origin)"
                let source = Source.peer(link: presence.viaLink, originReplica: origin.split(separator: ":").first.flatMap { UInt64($0) })
                found[key, default: Found(user: presence.selection.user, isSelf: false)].places.append((presence.sequence, place, source))
                // The newest presence says how the person is named and coloured now.
                if presence.sequence >= found[key]?.newest ?? 0 {
                    found[key]?.user = presence.selection.user
                    found[key]?.newest = presence.sequence
                }
            }
        }
        return found.sorted { ($0.value.user.name, $0.key) < ($1.value.user.name, $1.key) }.map { _, person in
            let places = person.places.sorted { ($0.order, $0.place.uri) > ($1.order, $1.place.uri) }
            let role = places.isEmpty ? nil : role(of: places[0].source, in: places[0].place.uri)
            return WhoRequest.Person(user: person.user, isSelf: person.isSelf, at: places.map(\.place), role: role?.rawValue)
        }
    }

    /// Who put a cursor there: an editor of this daemon, or a peer's editor whose presence came on
    /// link `link` from the daemon of replica `originReplica`.
    private enum Source {
        case local
        case peer(link: Int, originReplica: UInt64?)
    }

    private struct Found {
        var user: WireUser
        var isSelf: Bool
        var places: [(order: UInt64, place: WhoRequest.Place, source: Source)] = []
        var newest: UInt64 = 0
    }

    /// The role of whoever `source` is in the project of document `uri`: nil in the general
    /// scope, and for a peer's editor whose presence did not come on its own daemon's link.
    private func role(of source: Source, in uri: String) -> ProjectRole? {
        guard let access, case .project(let key) = DocumentScope(uri: uri) else { return nil }
        switch source {
        case .local:
            return access.ownRole(inProject: key)
        case .peer(let linkID, let originReplica):
            guard let link = links[linkID], let originReplica, link.peerReplica?.rawValue == originReplica else { return nil }
            return access.role(of: link)
        }
    }

    /// Where `selection`'s cursor (the head of its last range) is in `document`: in the text the
    /// asker was sent when it has the document open (as its `cursor/update`s are placed), else in
    /// the document's text. Nil for a selection with no range (the person left).
    private func place(of selection: SharedDocument.RemoteSelection, number: Int, in document: SharedDocument,
                       for asker: any EditorEndpoint, encoding: PositionEncoding) -> WhoRequest.Place? {
        guard let head = selection.selections.last?.head else { return nil }
        let texts = [asker.view(of: document.uri)?.sent, document.text].compactMap { $0 }
        for text in texts {
            guard let offset = SharedDocument.offset(of: head, in: text), offset >= 0, offset <= text.count else { continue }
            let position = text.position(ofOffset: offset, in: encoding)
            return WhoRequest.Place(uri: document.uri, path: document.file?.path, line: position.line,
                                    character: position.character, session: number)
        }
        return nil
    }
}

extension ProjectAccess {
    /// The role of `link`'s peer in the project of the link's scope, as `peer/status` and
    /// `quire/who` show it: nil for a link of the general scope, one whose scope or key is not
    /// known yet (its handshake), and a key the roster does not name.
    func role(of link: any PeerEndpoint) -> ProjectRole? {
        guard case .project(let key)? = link.scope, let peerKey = link.peerKey else { return nil }
        return role(ofPeerKey: peerKey, inProject: key)
    }
}
