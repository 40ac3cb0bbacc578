import JSON
import QuireProtocol
import ReplicatingTypes

/// The content of a `presence` peer frame: where one editor (on any daemon) has its cursors and
/// selections in one document, anchored to element IDs so that every daemon can place them in
/// each of its editors' views, with the editor's user name and colour.
///
/// Guarantees: decoding accepts only well-formed messages within bounds (at most
/// `maximumSelections` selections, names cleaned and cut like every peer-supplied name, colours
/// `#rrggbb` or nothing); `sequence` grows with every message of one origin, so relays drop
/// what is old or repeated.
struct PresenceMessage {
    static let maximumSelections = 64

    var uri: String
    var documentID: UInt64
    /// `"<replica>:<session>"` of the editor's daemon and session.
    var origin: String
    var sequence: UInt64
    var user: WireUser
    /// Empty: the editor left the document.
    var selections: [(anchor: SharedDocument.Anchor, head: SharedDocument.Anchor)]

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    var json: JSONValue {
        [
            "uri": .string(uri), "id": .string(String(documentID)), "origin": .string(origin),
            "sequence": .string(String(sequence)), "user": user.json,
            "selections": .array(selections.map { .array([Self.encode($0.anchor), Self.encode($0.head)]) }),
        ]
    }

    init(uri: String, documentID: UInt64, origin: String, sequence: UInt64, user: WireUser,
         selections: [(anchor: SharedDocument.Anchor, head: SharedDocument.Anchor)]) {
        self.uri = uri
        self.documentID = documentID
        self.origin = origin
        self.sequence = sequence
        self.user = user
        self.selections = selections
    }

    init(json: JSONValue) throws(Invalid) {
        guard let uri = json["uri"]?.stringValue, !uri.isEmpty, uri.utf8.count <= 4096,
              let id = json["id"]?.stringValue.flatMap({ UInt64($0) }),
              let origin = json["origin"]?.stringValue, Self.isOrigin(origin),
              let sequence = json["sequence"]?.stringValue.flatMap({ UInt64($0) }),
              let name = json["user"]?["name"]?.stringValue,
              let list = json["selections"]?.arrayValue else { throw Invalid(description: "malformed presence") }
        guard list.count <= Self.maximumSelections else {
            throw Invalid(description: "presence with \(list.count) selections exceeds the limit of \(Self.maximumSelections)")
        }
        var selections: [(anchor: SharedDocument.Anchor, head: SharedDocument.Anchor)] = []
        for pair in list {
            guard let ends = pair.arrayValue, ends.count == 2, let anchor = Self.decode(ends[0]), let head = Self.decode(ends[1]) else {
                throw Invalid(description: "malformed presence selection")
            }
            selections.append((anchor, head))
        }
        let color = json["user"]?["color"]?.stringValue.flatMap { Self.isColor($0) ? $0 : nil }
        self.init(uri: uri, documentID: id, origin: origin, sequence: sequence,
                  user: WireUser(name: DisplayText.clean(name), color: color), selections: selections)
    }

    private static func encode(_ anchor: SharedDocument.Anchor) -> JSONValue {
        switch anchor {
        case .start: return "start"
        case .after(let id): return .string("\(id.replica.rawValue):\(id.counter)")
        }
    }

    private static func decode(_ value: JSONValue) -> SharedDocument.Anchor? {
        guard let text = value.stringValue else { return nil }
        if text == "start" { return .start }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let replica = UInt64(parts[0]), let counter = UInt64(parts[1]) else { return nil }
        return .after(ElementID(replica: ReplicaID(replica), counter: counter))
    }

    private static func isOrigin(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && UInt64(parts[0]) != nil && Int(parts[1]) != nil
    }

    static func isColor(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        return scalars.count == 7 && scalars[0] == "#" && scalars.dropFirst().allSatisfy { $0.properties.isASCIIHexDigit }
    }
}
