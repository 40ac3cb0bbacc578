import QuireProtocol
import ReplicatingTypes

/// Who is where, for `quire/who`: every person whose cursor this daemon knows, its own editors'
/// sessions and the peers' editors whose presence reached it, with their cursor in each document
/// they have one in, most recent first, placed for the asking editor. Names are shown as they
/// are kept: cleaned on arrival (`initialize`, `PresenceMessage`). May call: the documents and
/// the session registry.
struct WhoIsHere {
    let documents: any DocumentLookup
    let sessions: SessionRegistry

    /// The people, sorted by name (then by who they are, so the order is stable), as `asker`
    /// (whose editor counts characters in `encoding`) is to see them.
    func people(for asker: any EditorEndpoint, encoding: PositionEncoding) -> [WhoRequest.Person] {
        var found: [String: Found] = [:]
        for document in documents.documents.values {
            for (sessionID, selection) in document.selections {
                guard let session = sessions.sessions[sessionID], session.isRunning,
                      let place = place(of: selection, number: sessionID, in: document, for: asker, encoding: encoding) else { continue }
                let key = "local:\(sessionID)"
                found[key, default: Found(user: session.user, isSelf: sessionID == asker.id)].places.append((selection.moved, place))
            }
            for (origin, presence) in document.peerPresences {
                guard let place = place(of: presence.selection, number: presence.number, in: document, for: asker, encoding: encoding)
                else { continue }
                let key = "peer:\(origin)"
                found[key, default: Found(user: presence.selection.user, isSelf: false)].places.append((presence.sequence, place))
                // The newest presence says how the person is named and coloured now.
                if presence.sequence >= found[key]?.newest ?? 0 {
                    found[key]?.user = presence.selection.user
                    found[key]?.newest = presence.sequence
                }
            }
        }
        return found.sorted { ($0.value.user.name, $0.key) < ($1.value.user.name, $1.key) }.map { _, person in
            let places = person.places.sorted { ($0.order, $0.place.uri) > ($1.order, $1.place.uri) }.map(\.place)
            return WhoRequest.Person(user: person.user, isSelf: person.isSelf, at: places)
        }
    }

    private struct Found {
        var user: WireUser
        var isSelf: Bool
        var places: [(order: UInt64, place: WhoRequest.Place)] = []
        var newest: UInt64 = 0
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
