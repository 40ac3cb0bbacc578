import EditingTraces
import QuireProject
import Testing

/// The join line: round trips, and every kind of damage fails with the error that names it.
@Suite struct JoinLineTests {
    static let secret = (0..<30).map { UInt8($0 * 7 % 256) }
    static let fingerprint = "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345"

    static func sample() throws -> JoinLine {
        try JoinLine(name: "greeter", addresses: [PeerAddress("192.168.1.20:7070"), PeerAddress("[fe80::1%eth0]:7070"), PeerAddress("alice-laptop.local:7070")],
                     secret: secret, fingerprint: fingerprint)
    }

    @Test func roundTrip() throws {
        let line = try Self.sample()
        let text = line.encoded
        #expect(text.hasPrefix("qj1-"))
        #expect(text.utf8.allSatisfy { (97...122).contains($0) || (50...55).contains($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "1") || $0 == UInt8(ascii: "q") })
        let parsed = try JoinLine(parsing: text)
        #expect(parsed == line)
        #expect(parsed.fingerprintText == Self.fingerprint)
        #expect(parsed.addresses.map(\.description) == ["192.168.1.20:7070", "[fe80::1%eth0]:7070", "alice-laptop.local:7070"])
        // As people paste it: the whole command, upper case, wrapped over lines with spaces.
        let wrapped = "  quire join " + stride(from: 0, to: text.count, by: 20).map { String(Array(text)[$0..<min($0 + 20, text.count)]) }.joined(separator: "\n  ")
        #expect(try JoinLine(parsing: wrapped.uppercased()) == line)
    }

    @Test func optionalPartsAndTheLargestLineRoundTrip() throws {
        let relayed = try JoinLine(name: "p", addresses: [], secret: Self.secret, fingerprint: Self.fingerprint,
                                   relay: PeerAddress("relay.example.org:443"), rendezvous: Array(repeating: 9, count: 32))
        #expect(try JoinLine(parsing: relayed.encoded) == relayed)
        let host = String(repeating: "h", count: JoinLine.maximumAddressBytes - 6)
        let largest = try JoinLine(name: String(repeating: "n", count: JoinLine.maximumNameBytes),
                                   addresses: (0..<JoinLine.maximumAddresses).map { _ in try PeerAddress(host: host, port: 65535) },
                                   secret: Array(repeating: 1, count: JoinLine.secretBytes.upperBound), fingerprint: Self.fingerprint,
                                   relay: PeerAddress(host: host, port: 1), rendezvous: Array(repeating: 2, count: JoinLine.rendezvousBytes.upperBound),
                                   projectKey: String(repeating: "3", count: 2 * JoinLine.projectKeyBytes))
        #expect(largest.encoded.count <= JoinLine.maximumCharacters)
        #expect(try JoinLine(parsing: largest.encoded) == largest)
    }

    /// An invitation's line carries the project key (tag 5, which a Quire from before roles
    /// refuses as a part it does not know: "update Quire"); a line without it still reads.
    @Test func anInvitationsLineCarriesTheProjectKey() throws {
        let invitation = try JoinLine(name: "greeter", addresses: [PeerAddress("10.0.0.2:7070")], secret: Self.secret,
                                      fingerprint: Self.fingerprint, projectKey: "3fa29c1b00d4e6f1")
        let parsed = try JoinLine(parsing: invitation.encoded)
        #expect(parsed == invitation && parsed.projectKeyText == "3fa29c1b00d4e6f1")
        #expect(try JoinLine(parsing: Self.sample().encoded).projectKey == nil)
        #expect(throws: JoinLineError.self) {
            try JoinLine(name: "g", addresses: [PeerAddress("10.0.0.2:7070")], secret: Self.secret, fingerprint: Self.fingerprint, projectKey: "3fa29c1b")
        }
    }

    /// A file shared by itself: the line carries the single-file mark (tag 6, empty; a Quire
    /// that does not know it refuses the line rather than take the project for a folder), only
    /// with a name a project path can hold.
    @Test func aFileSharedByItselfIsMarkedInTheLine() throws {
        let single = try JoinLine(name: "notes.md", addresses: [PeerAddress("10.0.0.2:7070")], secret: Self.secret,
                                  fingerprint: Self.fingerprint, projectKey: "3fa29c1b00d4e6f1", singleFile: true)
        let parsed = try JoinLine(parsing: single.encoded)
        #expect(parsed == single && parsed.singleFile && parsed.name == "notes.md")
        #expect(try JoinLine(parsing: Self.sample().encoded).singleFile == false)
        #expect(single.encoded != (try JoinLine(name: "notes.md", addresses: [PeerAddress("10.0.0.2:7070")], secret: Self.secret,
                                                fingerprint: Self.fingerprint, projectKey: "3fa29c1b00d4e6f1")).encoded)
        for name in [".git", ".GIT"] {
            #expect(throws: JoinLineError.self, "\(name)") {
                try JoinLine(name: name, addresses: [PeerAddress("10.0.0.2:7070")], secret: Self.secret, fingerprint: Self.fingerprint, singleFile: true)
            }
        }
        #expect(try JoinLine(name: ".git", addresses: [PeerAddress("10.0.0.2:7070")], secret: Self.secret, fingerprint: Self.fingerprint).name == ".git",
                "a folder project may still be named so")
    }

    @Test func everyTruncationIsReportedAsTruncated() throws {
        let text = try Self.sample().encoded
        for length in 4..<text.count {
            let cut = String(text.prefix(length))
            #expect(throws: JoinLineError.self) { try JoinLine(parsing: cut) }
            do {
                _ = try JoinLine(parsing: cut)
            } catch {
                if length > 10 {
                    #expect(error == .truncated(characters: length - 4, expected: text.count - 4), "cut at \(length): \(error)")
                }
                #expect(error.description.contains("copy the whole line") || error.description.contains("not a join line"), "\(error)")
            }
        }
    }

    @Test func everyChangedCharacterIsCaughtAndNamesItsPart() throws {
        let line = try Self.sample()
        let text = Array(line.encoded)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var random = SeededRandom(seed: 7)
        var namedParts: Set<String> = []
        for position in 4..<text.count {
            for _ in 0..<3 {
                var changed = text
                var replacement = alphabet[random.below(alphabet.count)]
                while replacement == changed[position] { replacement = alphabet[random.below(alphabet.count)] }
                changed[position] = replacement
                do {
                    let parsed = try JoinLine(parsing: String(changed))
                    Issue.record("a changed character at \(position) was accepted: \(parsed)")
                } catch {
                    switch error {
                    case .damaged(let part, let range):
                        #expect(range.contains(position + 1), "position \(position + 1) outside \(range) (\(part))")
                        namedParts.insert(part.rawValue)
                    case .truncated, .extraCharacters:
                        Issue.record("a changed character at \(position) read as a wrong length: \(error)")
                    default:
                        #expect(error.description.contains("line"), "\(error)")
                    }
                }
            }
        }
        #expect(namedParts.isSuperset(of: ["length header", "project name", "addresses", "secret", "key fingerprint", "final check"]), "\(namedParts)")
    }

    @Test func aCharacterDroppedOrAddedAnywhereIsRefused() throws {
        let text = Array(try Self.sample().encoded)
        for position in 4..<text.count {
            var dropped = text
            dropped.remove(at: position)
            var added = text
            added.insert("a", at: position)
            // Within the header's characters (its 4 bytes) the shift damages the header itself.
            let inHeader = position - 4 < 7
            for (changed, lengthError) in [(dropped, JoinLineError.truncated(characters: text.count - 5, expected: text.count - 4)),
                                           (added, JoinLineError.extraCharacters(characters: text.count - 3, expected: text.count - 4))] {
                do {
                    _ = try JoinLine(parsing: String(changed))
                    Issue.record("accepted with a character dropped or added at \(position)")
                } catch {
                    if case .damaged(.header, _) = error, inHeader { continue }
                    #expect(error == lengthError, "at \(position): \(error)")
                }
            }
        }
        // Pasted twice.
        #expect(throws: JoinLineError.self) { try JoinLine(parsing: String(text) + String(text)) }
    }

    @Test func wrongKindsOfTextAreNamed() throws {
        let text = try Self.sample().encoded
        #expect(throws: JoinLineError.empty) { try JoinLine(parsing: "  \n ") }
        #expect(throws: JoinLineError.unsupportedVersion(2)) { try JoinLine(parsing: "qj2-" + text.dropFirst(4)) }
        #expect(throws: JoinLineError.unsupportedVersion(0)) { try JoinLine(parsing: "qj0-abc") }
        let newer = #expect(throws: JoinLineError.self) { try JoinLine(parsing: "qj17-" + text.dropFirst(4)) }
        #expect(newer?.description.contains("newer Quire") == true)
        let secret = #expect(throws: JoinLineError.self) { try JoinLine(parsing: "quire-abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst") }
        #expect(secret?.description.contains("quire secret") == true)
        #expect(throws: JoinLineError.self) { try JoinLine(parsing: "192.168.1.20:7070") }
        #expect(throws: JoinLineError.notAJoinLine(hint: "its version number is missing or unreadable")) { try JoinLine(parsing: "qj-abc") }
        #expect(throws: JoinLineError.badCharacter("\"0\"", position: 10)) { try JoinLine(parsing: String(text.prefix(9)) + "0" + text.dropFirst(10)) }
        #expect(throws: JoinLineError.badCharacter("a non-ASCII character", position: 6)) { try JoinLine(parsing: "qj1-aé" + text.dropFirst(6)) }
        #expect(throws: JoinLineError.extraCharacters(characters: text.count - 4 + 2, expected: text.count - 4)) { try JoinLine(parsing: text + "aa") }
        #expect(throws: JoinLineError.tooLong(characters: 20_000)) { try JoinLine(parsing: String(repeating: "a", count: 20_000)) }
        #expect(throws: JoinLineError.tooLong(characters: JoinLine.maximumCharacters + 1)) {
            try JoinLine(parsing: "qj1-" + String(repeating: "a", count: JoinLine.maximumCharacters - 3))
        }
        // Junk of every length never crashes or hangs, and is refused.
        var random = SeededRandom(seed: 3)
        let junkAlphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        for length in 0..<300 {
            let junk = "qj1-" + String((0..<length).map { _ in junkAlphabet[random.below(junkAlphabet.count)] })
            #expect(throws: JoinLineError.self) { try JoinLine(parsing: junk) }
        }
    }

    @Test func everyFieldIsBoundedWhenMade() throws {
        let address = try PeerAddress("h:1")
        #expect(throws: JoinLineError.self) { try JoinLine(name: "", addresses: [address], secret: Self.secret, fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "..", addresses: [address], secret: Self.secret, fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "a/b", addresses: [address], secret: Self.secret, fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: String(repeating: "n", count: 101), addresses: [address], secret: Self.secret, fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p", addresses: [], secret: Self.secret, fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p", addresses: Array(repeating: address, count: 9), secret: Self.secret, fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p", addresses: [address], secret: Array(Self.secret.prefix(8)), fingerprint: Self.fingerprint) }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p", addresses: [address], secret: Self.secret, fingerprint: "3f1c-0a9e") }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p", addresses: [address], secret: Self.secret, fingerprint: "zz1c-0a9e-77b2-10ff-0000-abcd-ef01-2345") }
        #expect(throws: JoinLineError.self) { try JoinLine(name: "p", addresses: [address], secret: Self.secret, fingerprint: Self.fingerprint, rendezvous: []) }
        for bad in ["h", "h:0", "h:65536", "h:-1", ":7070", "[::1:7070", "[zz::1]:7070", "a b:7070", "[fe80::1%]:7070", "h:+80"] {
            #expect(throws: JoinLineError.self, "\(bad)") { try PeerAddress(bad) }
        }
        #expect(try PeerAddress("[::1]:7070").host == "[::1]")
        #expect(try PeerAddress("10.0.0.1:1").port == 1)
    }
}
