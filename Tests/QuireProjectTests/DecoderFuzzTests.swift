import EditingTraces
@testable import QuireProject
import ReplicatingTypes
import Testing

/// Random and mutated input for the two decoders that read what other people send: the join
/// line (pasted by a person) and the tree operations (sent by a peer). Each case must end in a
/// value or the decoder's own error (a trap would end the test process), and a value must
/// survive its own encoding.
@Suite struct DecoderFuzzTests {
    // MARK: Join line

    /// A body with every check right, so that the reader gets past them to the fields: random
    /// tags (known, unknown required, unknown optional), lengths and values.
    static func checkedBody(_ random: inout SeededRandom) -> [UInt8] {
        let tags: [UInt8] = [1, 2, 3, 4, 0x81, 0x82, 0, 5, 0x7F, 0x80, 0xFF]
        var fields: [UInt8] = []
        func append(_ tag: UInt8, _ value: [UInt8]) {
            let header = [tag, UInt8(value.count)]
            fields += header + value + JoinLine.fieldCheck(header + value)
        }
        // Half the time the parts a line needs, so that some lines are whole and others break
        // one bound among otherwise good parts.
        if random.below(2) == 0 {
            append(1, Array("project".utf8))
            append(2, Array("h.local:7070".utf8))
            append(3, Array(repeating: 3, count: 16))
            append(4, Array(repeating: 4, count: 16))
        }
        for _ in 0..<random.below(random.below(2) == 0 ? 2 : 12) {
            let tag = tags[random.below(tags.count)]
            append(tag, randomValue(&random, tag: tag))
        }
        // Sometimes a field cut short, or its length byte lying.
        if random.below(8) == 0, !fields.isEmpty { fields.removeLast(random.below(min(fields.count, 4)) + 1) }
        let length = fields.count + 6
        let header = [UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        var body = header + JoinLine.fieldCheck(header) + fields
        body += [0, 4] + JoinLine.finalCheck(body)
        return body
    }

    static func randomValue(_ random: inout SeededRandom, tag: UInt8) -> [UInt8] {
        let samples: [[UInt8]] = [
            Array("greeter".utf8), Array("192.168.1.20:7070".utf8), Array("[fe80::1%eth0]:7070".utf8), Array("h:0".utf8),
            Array("h:99999".utf8), Array(":".utf8), Array("[".utf8), Array("[]:1".utf8), Array("a:+1".utf8), Array("..".utf8),
            Array("a/b".utf8), [0xFF, 0xFE], [0xC3], [0], Array("é:1".utf8), Array("x:٣".utf8),
        ]
        switch random.below(4) {
        case 0: return samples[random.below(samples.count)]
        case 1: return (0..<random.below(256)).map { _ in UInt8(random.below(256)) }
        case 2: return Array(repeating: UInt8(random.below(256)), count: [16, 15, 17, 64, 65, 0, 1, 255][random.below(8)])
        default: return (0..<random.below(40)).map { _ in Array("ab.-_:[]%0123456789".utf8)[random.below(19)] }
        }
    }

    static func mutate(_ text: String, _ random: inout SeededRandom) -> String {
        var characters = Array(text.utf8)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567 \n-qjQJ01é".utf8)
        for _ in 0..<(1 + random.below(4)) {
            let position = random.below(characters.count + 1)
            switch random.below(4) {
            case 0 where position < characters.count: characters[position] = alphabet[random.below(alphabet.count)]
            case 1: characters.insert(alphabet[random.below(alphabet.count)], at: position)
            case 2 where position < characters.count: characters.remove(at: position)
            default: characters = Array(characters.prefix(position)) + Array(characters.prefix(position))
            }
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// Parses `text`; a line that is accepted must round-trip and be within every bound.
    static func check(_ text: String) {
        do {
            let line = try JoinLine(parsing: text)
            #expect(line.encoded.count <= JoinLine.maximumCharacters)
            #expect((try? JoinLine(parsing: line.encoded)) == line, "accepted \(text.prefix(80)) does not round-trip")
            #expect(JoinLine.secretBytes.contains(line.secret.count) && line.fingerprint.count == JoinLine.fingerprintBytes)
            #expect(line.addresses.count <= JoinLine.maximumAddresses && (!line.addresses.isEmpty || line.relay != nil))
        } catch {
            #expect(!error.description.isEmpty)
        }
    }

    @Test func joinLinesWithRightChecksAndRandomFieldsEndInALineOrAnError() throws {
        var random = SeededRandom(seed: 2026)
        var accepted = 0
        for _ in 0..<3000 {
            let body = Self.checkedBody(&random)
            let text = JoinLine.textPrefix + Base32.encode(body)
            if (try? JoinLine(parsing: text)) != nil { accepted += 1 }
            Self.check(text)
        }
        // Both outcomes were reached, so the fields were really read.
        #expect(accepted > 0 && accepted < 3000)
    }

    @Test func mutatedAndRandomJoinLinesEndInALineOrAnError() throws {
        var random = SeededRandom(seed: 99)
        let valid = try JoinLine(name: "p", addresses: [PeerAddress("h.local:1")], secret: Array(repeating: 5, count: 16),
                                 fingerprint: Array(repeating: 7, count: 16), relay: PeerAddress("[::1]:2"), rendezvous: [1, 2, 3]).encoded
        for _ in 0..<3000 { Self.check(Self.mutate(valid, &random)) }
        for _ in 0..<1000 {
            let bytes = (0..<random.below(600)).map { _ in UInt8(random.below(256)) }
            Self.check((random.below(2) == 0 ? "qj1-" : "") + String(decoding: bytes, as: UTF8.self))
        }
    }

    // MARK: Tree operations

    static func validBatch(_ random: inout SeededRandom) throws -> [UInt8] {
        var tree = ProjectTree(replica: ReplicaID(UInt64(1 + random.below(3))))
        var operations: [ProjectTree.Operation] = []
        for index in 0..<(1 + random.below(6)) {
            operations.append(try tree.create(at: ProjectPath("d\(random.below(3))/f\(index).txt")))
        }
        if random.below(2) == 0 { operations.append(try tree.delete(operations[0].file)) }
        return ProjectTree.Operation.encode(operations)
    }

    /// Decodes `bytes`; what decodes is applied to a tree, which must accept or refuse each
    /// operation, and must re-encode to what it was.
    static func decodeAndApply(_ bytes: [UInt8]) {
        do {
            let operations = try ProjectTree.Operation.decode(bytes)
            #expect(operations.count <= ProjectTree.Operation.maximumBatch)
            #expect((try? ProjectTree.Operation.decode(ProjectTree.Operation.encode(operations))) == operations)
            var tree = ProjectTree(replica: ReplicaID(1))
            for operation in operations { _ = try? tree.apply(operation) }
            // The tree still makes local changes (or refuses them) after whatever came in.
            _ = try? tree.create(at: ProjectPath("fresh-\(bytes.count)"))
        } catch {
            #expect(!String(describing: error).isEmpty)
        }
    }

    @Test func mutatedAndRandomTreeBatchesDecodeOrAreRefused() throws {
        var random = SeededRandom(seed: 4242)
        var decoded = 0
        for _ in 0..<3000 {
            var bytes = try Self.validBatch(&random)
            for _ in 0..<(1 + random.below(3)) {
                let position = random.below(bytes.count)
                switch random.below(5) {
                case 0: bytes[position] = UInt8(random.below(256))
                case 1: bytes[position] ^= UInt8(1 << random.below(8))
                case 2: bytes.insert(contentsOf: Array(repeating: 0xFF, count: random.below(12)), at: position)
                case 3: bytes.removeSubrange(position..<min(bytes.count, position + 1 + random.below(4)))
                default: bytes[position] = [0, 0x7F, 0x80, 0xFF, 0x2F, 0x2E][random.below(6)]
                }
                if bytes.isEmpty { bytes = [1] }
            }
            if (try? ProjectTree.Operation.decode(bytes)) != nil { decoded += 1 }
            Self.decodeAndApply(bytes)
        }
        for _ in 0..<1000 {
            Self.decodeAndApply([1] + (0..<random.below(200)).map { _ in UInt8(random.below(256)) })
        }
        #expect(decoded > 0)
    }
}
