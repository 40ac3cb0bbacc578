import JSON
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// Opening a name a peer holds joins the peer's document; two documents created separately
/// under one name are both kept, both editors are told, and one can be merged into the other.
@Suite struct JoinByNameTests {
    @Test func openingANameBeforeThePeersCopyArrivesJoinsIt() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: "ann's plan\n")
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        bob.open("notes", text: "")   // before the link is up
        try net.link(a, b)
        net.pump([a, b])
        bob.deliver()
        #expect(bob.string == "ann's plan\n", "bob's empty buffer became ann's document")
        #expect(b.documents.keys.sorted() == ["notes"] && a.documents.keys.sorted() == ["notes"], "no second document anywhere")
        #expect(b.documents["notes"]?.id == a.documents["notes"]?.id)
        bob.edit(0..<0, with: "bob: ")
        net.pump([a, b])
        ann.deliver()
        #expect(ann.string == "bob: ann's plan\n")
    }

    @Test func twoDocumentsCreatedApartAreKeptToldAndCanBeMerged() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200, user: "bob's daemon")
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: "ann's text\n")
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        bob.open("notes", text: "bob's text\n")
        try net.link(a, b)
        net.pump([a, b])
        let fork = try #require(a.documents.keys.first { $0.hasPrefix("notes#") })
        #expect(a.documents[fork]?.text.string == "bob's text\n" && a.documents["notes"]?.text.string == "ann's text\n")
        // Told as facts the client words: the name, the copy and who made it.
        let told = ann.take("document/forked").map { $0["params"] }
        #expect(told.count == 1 && told.first??["uri"] == "notes" && told.first??["copy"] == .string(fork), "\(told)")
        #expect(told.first??["user"] == "bob" && told.first??["address"]?.stringValue != nil, "\(told)")
        #expect(ann.take("window/showMessage").isEmpty, "no sentence naming client commands")
        #expect(bob.take("document/forked").count == 1, "bob is told too")
        // Ann takes bob's text into hers; it reaches bob's daemon as an edit of the shared fork.
        let reply = ann.request("document/merge", ["uri": "notes", "from": .string(fork)])
        #expect(reply["result"]?["merged"] == 11, "\(reply)")
        ann.deliver()
        #expect(ann.string == "ann's text\nbob's text\n")
        #expect(ann.request("document/undo", ["uri": "notes"])["result"]?["done"] == true)
        ann.deliver()
        #expect(ann.string == "ann's text\n", "the merge is undone like an edit")
        #expect(ann.request("document/merge", ["uri": "notes", "from": "nope"])["error"]?["code"] == -32010)
    }
}
