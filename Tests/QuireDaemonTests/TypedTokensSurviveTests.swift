import EditingTraces
import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// The oracle for "what anyone typed ends up intact, once, where they typed it": three editors
/// type unique tokens next to, remove and replace the words they see, each change sent in a random
/// form (ranges, resent lines, full text, several changes), with the daemon's edits reaching them
/// late, and the daemon restarting now and then while an edit is in flight (its reply lost, or
/// the edit itself lost). At the end every editor shows the daemon's text, and every token that no
/// one removed is in it exactly once, whole, and what one person typed in a row is in the order
/// they typed it.
///
/// Tokens start with the first letters of the words around them (`th12q` next to `then`), so a
/// diff that rebuilds a typed word from letters of its neighbours would garble it.
@Suite struct TypedTokensSurviveTests {
    /// One person: the text their editor shows (kept across daemon restarts) and the connection.
    final class Person {
        let name: String
        /// Nil only while the daemon restarts (the old connection must go with the old daemon).
        var editor: TestEditor!
        /// An edit sent but not acknowledged when the daemon went away (its reply lost, or the
        /// edit itself), with the text before it: the reopen's `pending` and `base`.
        var inFlight: (base: [Unicode.Scalar], id: String, changes: JSONValue)?
        var nextEdit = 0
        /// The tokens this person typed one after another, each right after the previous one, as
        /// a person types a sentence: they must end up in this order.
        var chain: Int?

        init(name: String, editor: TestEditor) {
            self.name = name
            self.editor = editor
        }
    }

    static let words = ["then", "thus", "this", "that", "them", "than", "thin", "these"]

    /// Maximal runs of word characters in `text`, as scalar ranges.
    static func wordRanges(_ text: [Unicode.Scalar]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start: Int?
        for (i, scalar) in text.enumerated() {
            let word = scalar != " " && scalar != "\n"
            if word, start == nil { start = i }
            if !word, let s = start { ranges.append(s..<i); start = nil }
        }
        if let s = start { ranges.append(s..<text.count) }
        return ranges
    }

    static func occurrences(of token: String, in text: String) -> Int {
        text.components(separatedBy: token).count - 1
    }

    @Test(arguments: 0..<24 as Range<UInt64>)
    func everyTokenNobodyRemovedIsThereOnceAndWhole(seed: UInt64) throws {
        let steps = Int(ProcessInfo.processInfo.environment["QUIRE_SOAK"] ?? "") ?? 60
        var random = SeededRandom(seed: seed)
        let path = DaemonProcess.temporaryDirectory("tokens")
        var alive: Set<String> = []
        var removed: Set<String> = []
        var tokenCount = 0
        var chains: [[String]] = []
        let initial = (0..<3).map { _ in (0..<4).map { _ in Self.words.randomElement(using: &random) ?? "then" }.joined(separator: " ") }
            .joined(separator: "\n") + "\n"

        var daemon: Daemon? = try EditIntentTests.daemon(at: path)
        let people = ["ann", "bob", "cy"].map { name in Person(name: name, editor: TestEditor(daemon: daemon!)) }
        for person in people {
            person.editor.initialize(user: person.name, encodings: ["utf-8"])
            person.editor.open("doc", text: initial)
            person.editor.holdIncoming = true
        }

        /// Marks the tokens that `range` of `person`'s text touches as removed by someone.
        func markRemoved(_ range: Range<Int>, in person: Person) {
            let touched = String(String.UnicodeScalarView(person.editor.text[range]))
            for token in alive where touched.contains(token) || token.contains(touched) && !touched.isEmpty {
                removed.insert(token)
            }
        }

        /// One edit by `person`: type a token at a word's edge, remove a word, or replace one.
        func edit(_ person: Person, lost: Bool = false, neverSent: Bool = false) {
            let text = person.editor.text
            let wordsSeen = Self.wordRanges(text)
            // Half the typing goes on right after the person's last typed token, while it shows.
            let chainEnd = person.chain.flatMap { chain in
                wordsSeen.first { String(String.UnicodeScalarView(text[$0])) == chains[chain].last }
            }
            let goOnTyping = chainEnd != nil && Bool.random(using: &random)
            guard let word = goOnTyping ? chainEnd : wordsSeen.randomElement(using: &random) else { return }
            let neighbour = String(String.UnicodeScalarView(text[word].prefix(2)))
            tokenCount += 1
            let token = "\(neighbour)\(tokenCount)q"
            let range: Range<Int>, replacement: String
            switch goOnTyping ? 0 : Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                // Typed before the word or after it, with a space between.
                if !goOnTyping && Bool.random(using: &random) { range = word.lowerBound..<word.lowerBound; replacement = token + " " }
                else { range = word.upperBound..<word.upperBound; replacement = " " + token }
                alive.insert(token)
                if goOnTyping, let chain = person.chain {
                    chains[chain].append(token)
                } else if range.lowerBound == word.upperBound {
                    person.chain = chains.count
                    chains.append([token])
                }
            case 5..<8:
                range = word
                replacement = ""
                markRemoved(range, in: person)
            default:
                range = word
                replacement = token
                markRemoved(range, in: person)
                alive.insert(token)
            }
            // Whole lines or the whole text without a cursor cannot tell a word replaced by a
            // similar one (th2q -> th29q) from typing inside it: replacements come in forms that can.
            let forms = replacement.isEmpty || range.isEmpty ? EditIntentTests.Form.allCases : EditIntentTests.Form.allCases.filter { $0 != .lines && $0 != .full }
            let form = forms.randomElement(using: &random) ?? .range
            let base = person.editor.text
            person.nextEdit += 1
            let id = "\(person.name)-\(person.nextEdit)"
            if neverSent {
                // Sent as the daemon died: it never arrived.
                let change: JSONValue = ["range": ["start": person.editor.position(of: range.lowerBound),
                                                   "end": person.editor.position(of: range.upperBound)], "text": .string(replacement)]
                person.editor.text.replaceSubrange(range, with: Array(replacement.unicodeScalars))
                person.inFlight = (base, id, [change])
                return
            }
            let (reply, changes) = EditIntentTests.type(person.editor, range, replacement, as: form, editID: id)
            if ProcessInfo.processInfo.environment["QUIRE_TRACE_TOKENS"] != nil {
                print("\(person.name) \(form) \(range) \(replacement.debugDescription) lost:\(lost): \(String(String.UnicodeScalarView(base)).debugDescription) -> daemon \(daemon?.documents["doc"]?.text.string.debugDescription ?? "")")
            }
            #expect(reply["error"] == nil, "seed \(seed): \(person.name)'s edit was refused: \(reply)")
            if lost { person.inFlight = (base, id, changes) }   // applied, but its reply is lost
        }

        /// The daemon dies with some edits in flight, and starts again on its data directory;
        /// every editor reopens with its text, its base and what it had in flight.
        func restart() throws {
            for person in people where Bool.random(using: &random) {
                edit(person, lost: true, neverSent: Bool.random(using: &random))
            }
            daemon?.commit()
            let states = people.map { ($0.editor.text, $0.inFlight) }
            people.forEach { $0.editor = nil }
            daemon = nil
            daemon = try EditIntentTests.daemon(at: path)
            for (person, (text, inFlight)) in zip(people, states) {
                let editor = TestEditor(daemon: daemon!)
                editor.initialize(user: person.name, encodings: ["utf-8"])
                editor.text = text
                editor.uri = "doc"
                var params: [String: JSONValue] = ["uri": "doc", "text": .string(editor.string)]
                if let inFlight {
                    params["base"] = .string(String(String.UnicodeScalarView(inFlight.base)))
                    params["pending"] = [["editId": .string(inFlight.id), "changes": inFlight.changes]]
                } else {
                    params["base"] = .string(editor.string)
                }
                let reply = editor.request("document/open", .object(params))
                for change in reply["result"]?["changes"]?.arrayValue ?? [] { editor.apply(change) }
                editor.holdIncoming = true
                person.editor = editor
                person.inFlight = nil
            }
        }

        for _ in 0..<steps {
            let person = people.randomElement(using: &random)!
            switch Int.random(in: 0..<20, using: &random) {
            case 0: try restart()
            case 1..<8: person.editor.deliver(held: Int.random(in: 1...3, using: &random))
            default: edit(person)
            }
        }
        for _ in 0..<10 { for person in people { person.editor.deliver() } }

        let final = daemon?.documents["doc"]?.text.string ?? "<no document>"
        for person in people {
            #expect(person.editor.string == final, "seed \(seed): \(person.name) shows \(person.editor.string.debugDescription), the daemon \(final.debugDescription)")
        }
        for token in alive.subtracting(removed).sorted() {
            #expect(Self.occurrences(of: token, in: final) == 1, "seed \(seed): \(token) is not there once and whole in \(final.debugDescription)")
        }
        // What one person typed in a row is still in the order they typed it.
        let finalWords = Self.wordRanges(Array(final.unicodeScalars)).map { String(String.UnicodeScalarView(Array(final.unicodeScalars)[$0])) }
        for chain in chains where chain.count > 1 {
            let kept = chain.filter { alive.contains($0) && !removed.contains($0) }
            let places = kept.compactMap { finalWords.firstIndex(of: $0) }
            #expect(places == places.sorted(), "seed \(seed): \(kept) typed in a row are out of order in \(final.debugDescription)")
        }
        #expect(chains.contains { $0.count > 1 }, "seed \(seed): someone typed tokens in a row")
    }
}
