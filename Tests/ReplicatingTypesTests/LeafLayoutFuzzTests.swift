import EditingTraces
import Testing
@testable import ReplicatingTypes

/// Randomized differential tests of the leaf layout (leaves of many lines, split when overfull,
/// merged when small with their numbers reused, narrow content, the run hint) against
/// `RGAOracle`: documents of several leaves, edits that split and merge them, remote
/// insertions anchored to tombstones and to elements of merged leaves, undo-like reinsertions.
@Suite struct LeafLayoutFuzzTests {
    /// Scalars of every width, with line breaks and CR.
    static let alphabets: [[Unicode.Scalar]] = [
        ["a", "b", " ", "\n"],
        ["a", "é", "ÿ", "\n", "\r"],
        ["中", "x", "\n", "é"],
        ["😀", "𝄞", "a", "\n", "\n"],
    ]

    static func randomText(_ count: Int, _ random: inout SeededRandom) -> [Unicode.Scalar] {
        let alphabet = alphabets[random.below(alphabets.count)]
        return (0..<count).map { _ in alphabet[random.below(alphabet.count)] }
    }

    /// Every paragraph and position query around every leaf boundary (and at the ends) agrees
    /// with a plain array of scalars.
    static func checkLineQueries(_ text: ReplicatingText, _ oracle: [Unicode.Scalar], _ context: String) {
        let starts = [0] + oracle.indices.filter { oracle[$0] == "\n" }.map { $0 + 1 }
        #expect(text.lineCount == starts.count, "\(context)")
        var offsets = Set([0, oracle.count])
        for start in text.scalars.leafStarts { for d in -1...1 { offsets.insert(start + d) } }
        for offset in offsets.sorted() where offset >= 0 && offset <= oracle.count {
            let line = starts.lastIndex { $0 <= offset }!
            #expect(text.scalars.paragraph(containing: offset) == line, "\(context) offset \(offset)")
            let end = line + 1 < starts.count ? starts[line + 1] - 1 : oracle.count
            #expect(text.scalars.rangeOfParagraph(line) == starts[line]..<end, "\(context) line \(line)")
            #expect(text.scalars.startOfParagraph(line) == starts[line], "\(context) line \(line)")
            #expect(text.lineScalars(line) == Array(oracle[starts[line]..<end]), "\(context) line \(line)")
            for encoding in PositionEncoding.allCases {
                let expected = TextPosition(line: line, character: encoding.width(of: oracle[starts[line]..<offset]))
                #expect(text.position(ofOffset: offset, in: encoding) == expected, "\(context) offset \(offset) \(encoding)")
                #expect((try? text.offset(of: expected, in: encoding)) == offset, "\(context) offset \(offset) \(encoding)")
            }
        }
    }

    /// Checks one copy against the oracle: visible text, the order of every ID (tombstones
    /// too), lookups by ID of sampled elements, the UTF-8 text.
    static func check(_ text: ReplicatingText, _ oracle: RGAOracle, _ random: inout SeededRandom, _ context: String, full: Bool) {
        text.scalars._checkInvariants()
        let visible = oracle.visible
        #expect(text.scalars.elements == visible, "\(context)")
        guard full else { return }
        #expect(text.scalars.allIDsInOrder == oracle.ids, "\(context)")
        #expect(text.string == visible.string, "\(context)")
        #expect(text.utf8Count == visible.string.utf8.count, "\(context)")
        for _ in 0..<20 where !oracle.elements.isEmpty {
            let element = oracle.elements[random.below(oracle.elements.count)]
            #expect(text.scalars.index(of: element.id) == oracle.visibleIndex(of: element.id), "\(context) \(element.id)")
            #expect(text.scalars.index(after: element.id) == oracle.visibleIndex(after: element.id), "\(context) \(element.id)")
        }
        for _ in 0..<10 where !visible.isEmpty {
            let i = random.below(visible.count)
            #expect(oracle.visibleIndex(of: text.scalars.id(at: i)) == i, "\(context) index \(i)")
        }
        checkLineQueries(text, visible, context)
    }

    /// One local copy typed into, pasted into and cut from (leaves split and merge, numbers are
    /// reused), while a second copy inserts remotely, anchored to visible elements and to
    /// tombstones (also of leaves merged away), and removes; the local copy also puts removed
    /// text back after its tombstones (undo). Both copies and the oracle agree after every step.
    @Test(arguments: testSeeds([101, 102, 103, 104]))
    func localAndRemoteEditsMatchAnOracle(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let start = Self.randomText(3_000, &random)
        var local = ReplicatingText(start.string, replica: ReplicaID(1))
        var remote = ReplicatingText(replica: ReplicaID(2))
        var oracle = RGAOracle()
        for op in local.operations() {
            remote.integrate(op)
            oracle.apply(op)
        }
        func tombstone() -> ElementID? {
            let removed = oracle.elements.filter { !$0.visible }
            return removed.isEmpty ? nil : removed[random.below(removed.count)].id
        }
        var frozen = FrozenUse()
        for step in 0..<250 {
            var fromLocal: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            var fromRemote: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            let n = local.count
            let watched = [FrozenUse.Watch(local), FrozenUse.Watch(remote)]
            if step % 40 == 39 {
                // Both copies have every operation: each may drop every tombstone (leaves freeze).
                local.dropTombstones()
                remote.dropTombstones()
                oracle.dropTombstones()
                frozen.compacted(local)
                Self.check(local, oracle, &random, "seed \(seed) step \(step) compacted", full: true)
                continue
            }
            switch random.below(10) {
            case 0, 1:
                // Typing, scalar by scalar, with a backspace now and then; the remote copy types
                // into the same place in between.
                var at = random.below(n + 1)
                for k in 0..<(1 + random.below(40)) {
                    if k > 0, at > 0, random.chance(0.15) {
                        fromLocal += local.replace((at - 1)..<at, with: [])
                        at -= 1
                    } else {
                        fromLocal += local.replace(at..<at, with: Self.randomText(1, &random))
                        at += 1
                    }
                    if random.chance(0.1) {
                        for op in fromLocal { remote.integrate(op); oracle.apply(op) }
                        fromLocal = []
                        let there = min(remote.count, max(0, at - 1 + random.below(3)))
                        let ops = remote.replace(there..<there, with: Self.randomText(1 + random.below(3), &random))
                        for op in ops { local.integrate(op); oracle.apply(op) }
                        if there < at { at += ops.reduce(0) { $0 + insertedCount($1) } }
                    }
                }
            case 2:
                let at = random.below(n + 1)
                fromLocal = local.replace(at..<at, with: Self.randomText(random.chance(0.3) ? 1_000 + random.below(2_500) : 1 + random.below(300), &random))
            case 3, 4:
                guard n > 0 else { continue }
                let at = random.below(n)
                let length = random.chance(0.3) ? 300 + random.below(3_000) : 1 + random.below(60)
                fromLocal = local.replace(at..<min(n, at + length), with: [])
            case 5:
                // Undo: removed text back after its tombstone, through the remote path.
                guard let id = tombstone() else { continue }
                if let op = local.insert(Self.randomText(1 + random.below(20), &random), after: id) { fromLocal = [op] }
            case 6:
                guard let id = tombstone() else { continue }
                if let op = remote.insert(Self.randomText(1 + random.below(20), &random), after: id) { fromRemote = [op] }
            case 7:
                let at = random.below(remote.count + 1)
                fromRemote = remote.replace(at..<at, with: Self.randomText(1 + random.below(random.chance(0.2) ? 1_500 : 30), &random))
            case 8:
                guard remote.count > 0 else { continue }
                let at = random.below(remote.count)
                fromRemote = remote.replace(at..<min(remote.count, at + 1 + random.below(random.chance(0.3) ? 2_000 : 40)), with: [])
            default:
                // Typing at the very start.
                for _ in 0..<(1 + random.below(5)) { fromLocal += local.replace(0..<0, with: Self.randomText(1, &random)) }
            }
            for op in fromLocal { remote.integrate(op); oracle.apply(op) }
            for op in fromRemote { local.integrate(op); oracle.apply(op) }
            frozen.edited(watched[0], local)
            frozen.edited(watched[1], remote)
            let context = "seed \(seed) step \(step)"
            Self.check(local, oracle, &random, context, full: step % 5 == 0)
            Self.check(remote, oracle, &random, context + " remote", full: step % 25 == 0)
        }
        Self.check(local, oracle, &random, "seed \(seed) end", full: true)
        Self.check(remote, oracle, &random, "seed \(seed) end remote", full: true)
        #expect(local == remote)
        frozen.expectExercised("seed \(seed)")
    }

    /// Three copies of a document of several leaves edit concurrently (typing, pastes, cuts,
    /// insertions after tombstones) while operations arrive in random order, some twice; now
    /// and then a copy merges another (`merged(with:)`), catches up from another's
    /// `operations(since:)`, or is replaced by the decoding of its own state; at synchronized
    /// points every copy drops its tombstones, and editing goes on. Every copy converges to the
    /// oracle, and the changes `apply` reports keep an editor-like mirror equal to the text.
    @Test(arguments: testSeeds([201, 202, 203]))
    func threeCopiesConvergeThroughLayoutChanges(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let start = Self.randomText(2_500, &random)
        var copies = [ReplicatingText(start.string, replica: ReplicaID(1)), ReplicatingText(replica: ReplicaID(2)), ReplicatingText(replica: ReplicaID(3))]
        var oracle = RGAOracle()
        for op in copies[0].operations() {
            copies[1].integrate(op)
            copies[2].integrate(op)
            oracle.apply(op)
        }
        var mirrors = copies.map { Array($0.string.unicodeScalars) }
        var inFlight: [(to: Int, op: ReplicatingArrayOperation<Unicode.Scalar>)] = []
        func deliver(_ op: ReplicatingArrayOperation<Unicode.Scalar>, to k: Int) {
            for change in copies[k].apply(op, reportingIn: .utf16) {
                let lower = Self.offset(of: change.range.start, in: mirrors[k])
                let upper = Self.offset(of: change.range.end, in: mirrors[k])
                mirrors[k].replaceSubrange(lower..<upper, with: change.text.unicodeScalars)
            }
        }
        func deliverAll() {
            for message in inFlight { deliver(message.op, to: message.to) }
            inFlight = []
        }
        var frozen = FrozenUse()
        for step in 0..<300 {
            let k = random.below(3)
            var ops: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            let n = copies[k].count
            let watched = copies.map(FrozenUse.Watch.init)
            switch random.below(20) {
            case 0..<5:
                var at = random.below(n + 1)
                for _ in 0..<(1 + random.below(30)) {
                    ops += copies[k].replace(at..<at, with: Self.randomText(1, &random))
                    at += 1
                }
            case 5:
                let at = random.below(n + 1)
                ops = copies[k].replace(at..<at, with: Self.randomText(random.chance(0.4) ? 800 + random.below(2_000) : 1 + random.below(200), &random))
            case 6, 7:
                guard n > 0 else { break }
                let at = random.below(n)
                ops = copies[k].replace(at..<min(n, at + 1 + random.below(random.chance(0.3) ? 2_500 : 50)), with: [])
            case 8:
                let removed = copies[k].scalars.removedIDs
                guard let range = removed.isEmpty ? nil : removed[random.below(removed.count)] else { break }
                let id = ElementID(replica: range.start.replica, counter: range.start.counter + UInt64(random.below(Int(range.count))))
                if let op = copies[k].insert(Self.randomText(1 + random.below(10), &random), after: id) { ops = [op] }
            case 9..<16:
                guard !inFlight.isEmpty else { break }
                let i = random.below(inFlight.count)
                let message = inFlight[i]
                if !random.chance(0.1) { inFlight.remove(at: i) }
                deliver(message.op, to: message.to)
                copies[message.to].scalars._checkInvariants()
            case 16:
                let j = (k + 1 + random.below(2)) % 3
                copies[k] = copies[k].merged(with: copies[j])
                mirrors[k] = Array(copies[k].string.unicodeScalars)
            case 17:
                let j = (k + 1 + random.below(2)) % 3
                for op in copies[j].operations(since: copies[k].versionVector) { deliver(op, to: k) }
            case 18:
                // (A compacted copy's state with operations waiting is format 3 and keeps them.)
                let replica = copies[k].replica
                let state = copies[k].encodedState()
                guard let decoded = try? ReplicatingText(decodingState: state, replica: replica, keepingWaitingOperations: true) else {
                    Issue.record("seed \(seed) step \(step): copy \(k) does not decode its own state")
                    break
                }
                #expect(decoded == copies[k], "seed \(seed) step \(step)")
                copies[k] = decoded
            default:
                guard random.chance(0.3) else { break }
                // A synchronized point: everything delivered, then every copy compacts.
                deliverAll()
                for c in 0..<3 {
                    for op in copies[(c + 1) % 3].operations(since: copies[c].versionVector) { deliver(op, to: c) }
                }
                #expect(copies[0] == copies[1] && copies[1] == copies[2], "seed \(seed) step \(step)")
                for c in 0..<3 {
                    copies[c].dropTombstones()
                    frozen.compacted(copies[c])
                }
                oracle.dropTombstones()
            }
            for c in 0..<3 { frozen.edited(watched[c], copies[c]) }
            for op in ops {
                oracle.apply(op)
                for to in 0..<3 where to != k { inFlight.append((to, op)) }
            }
            copies[k].scalars._checkInvariants()
            if !ops.isEmpty { mirrors[k] = Array(copies[k].string.unicodeScalars) }
            for c in 0..<3 { #expect(copies[c].scalars.elements == mirrors[c], "seed \(seed) step \(step) copy \(c)") }
        }
        deliverAll()
        for c in 0..<3 {
            let context = "seed \(seed) end copy \(c)"
            #expect(copies[c].scalars.pendingOperationCount == 0, "\(context)")
            #expect(mirrors[c] == copies[c].scalars.elements, "\(context)")
            Self.check(copies[c], oracle, &random, context, full: true)
        }
        #expect(copies[0] == copies[1] && copies[1] == copies[2], "seed \(seed)")
        frozen.expectExercised("seed \(seed)")
    }

    /// Typing and backspacing that arrive from peers (insertions anchored to the last element of
    /// the run they extend, removals at a run's end) find their run through the run hint rather
    /// than the ID index: here interleaved with local typing at the same place (runs of both
    /// replicas become siblings the placement must skip), pastes and cuts that split and merge
    /// leaves, delivery out of order and twice, and merges of a third copy. The receiving copy
    /// agrees with the oracle after every step, as does a mirror kept from the changes it
    /// reports, and most keystrokes from peers went through the hint.
    @Test(arguments: testSeeds([501, 502, 503]))
    func remoteTypingThroughTheRunHintMatchesAnOracle(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let isBreak = ReplicatingText.isLineBreak
        var a = ReplicatingArray(Self.randomText(2_000, &random), replica: ReplicaID(1), paragraphBreak: isBreak)
        var peers = [ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(2), paragraphBreak: isBreak),
                     ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(3), paragraphBreak: isBreak)]
        var oracle = RGAOracle()
        for op in a.operations() {
            for p in peers.indices { peers[p].integrate(op) }
            oracle.apply(op)
        }
        var mirror = a.elements
        // Operations in flight to `a`, and to each peer.
        var toA: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        var toPeer: [[ReplicatingArrayOperation<Unicode.Scalar>]] = [[], []]
        var keystrokes = 0
        var hitsBefore = a.storage.remoteHintHits
        var hits = 0
        func deliverToA(_ op: ReplicatingArrayOperation<Unicode.Scalar>) {
            for change in a.apply(op) {
                switch change {
                case .inserted(let at, let elements): mirror.insert(contentsOf: elements, at: at)
                case .removed(let at, let elements): mirror.removeSubrange(at..<(at + elements.count))
                }
            }
            hits += a.storage.remoteHintHits - hitsBefore
            hitsBefore = a.storage.remoteHintHits
        }
        func sent(_ ops: [ReplicatingArrayOperation<Unicode.Scalar>], from p: Int?) {
            for op in ops {
                oracle.apply(op)
                if let p {
                    toA.append(op)
                    toPeer[1 - p].append(op)
                } else {
                    for q in 0..<2 { toPeer[q].append(op) }
                }
            }
        }
        for step in 0..<200 {
            let p = random.below(2)
            switch random.below(10) {
            case 0..<5:
                // A peer types a word or a line (with backspaces); most keystrokes reach `a` in
                // order, some late, some twice, while `a` types at the same place now and then.
                var at = random.below(peers[p].count + 1)
                for _ in 0..<(1 + random.below(40)) {
                    if at > 0, random.chance(0.2) {
                        sent(peers[p].removeSubrange((at - 1)..<at).map { [$0] } ?? [], from: p)
                        at -= 1
                    } else {
                        sent([peers[p].insert(Self.randomText(1, &random)[0], at: at)], from: p)
                        at += 1
                    }
                    keystrokes += 1
                    while !toA.isEmpty, random.chance(0.8) {
                        let i = random.chance(0.9) ? 0 : random.below(toA.count)
                        let op = toA[i]
                        if !random.chance(0.05) { toA.remove(at: i) }
                        deliverToA(op)
                    }
                    if random.chance(0.1) {
                        let there = random.below(a.count + 1)
                        let typed = Self.randomText(1 + random.below(3), &random)
                        sent(a.insert(contentsOf: typed, at: there).map { [$0] } ?? [], from: nil)
                        mirror.insert(contentsOf: typed, at: there)
                    }
                }
            case 5:
                let at = random.below(a.count + 1)
                let pasted = Self.randomText(random.chance(0.3) ? 900 + random.below(2_000) : 1 + random.below(100), &random)
                sent(a.insert(contentsOf: pasted, at: at).map { [$0] } ?? [], from: nil)
                mirror.insert(contentsOf: pasted, at: at)
            case 6:
                guard a.count > 0 else { continue }
                let at = random.below(a.count)
                let end = min(a.count, at + 1 + random.below(random.chance(0.3) ? 2_000 : 50))
                sent(a.removeSubrange(at..<end).map { [$0] } ?? [], from: nil)
                mirror.removeSubrange(at..<end)
            case 7:
                // A peer cuts.
                guard peers[p].count > 0 else { continue }
                let at = random.below(peers[p].count)
                sent(peers[p].removeSubrange(at..<min(peers[p].count, at + 1 + random.below(300))).map { [$0] } ?? [], from: p)
            case 8:
                // `a` merges a peer's whole state (what it had not received arrives at once).
                a = a.merged(with: peers[p])
                mirror = a.elements
                hitsBefore = a.storage.remoteHintHits
            default:
                // Everything in flight arrives, in random order.
                while !toA.isEmpty { deliverToA(toA.remove(at: random.below(toA.count))) }
                for q in 0..<2 {
                    while !toPeer[q].isEmpty { peers[q].integrate(toPeer[q].remove(at: random.below(toPeer[q].count))) }
                }
            }
            let context = "seed \(seed) step \(step)"
            a._checkInvariants()
            #expect(a.elements == mirror, "\(context)")
        }
        while !toA.isEmpty { deliverToA(toA.removeFirst()) }
        for q in 0..<2 { while !toPeer[q].isEmpty { peers[q].integrate(toPeer[q].removeFirst()) } }
        for q in 0..<2 { for op in peers[1 - q].operations(since: peers[q].versionVector) { peers[q].integrate(op) } }
        a._checkInvariants()
        #expect(a.elements == mirror)
        #expect(a.elements == oracle.visible)
        #expect(a.allIDsInOrder == oracle.ids)
        #expect(a == peers[0] && peers[0] == peers[1], "seed \(seed)")
        #expect(hits * 2 >= keystrokes, "seed \(seed): \(hits) of \(keystrokes) keystrokes from peers through the run hint")
    }

    /// Break predicates other than the line feed: several breaks below U+0100 (counted through
    /// the table of the predicate's answers), one other byte, and breaks above U+00FF (asked of
    /// the predicate). Pastes, cuts and typing in leaves of every width keep each leaf's and
    /// branch's break counts equal to the predicate's (`_checkInvariants`), and paragraphs agree
    /// with a plain array, locally and on a copy that receives the operations.
    @Test(arguments: [0, 1])
    func breakPredicatesThroughTheScalarTable(predicate: Int) {
        var random = SeededRandom(seed: 601 + UInt64(predicate))
        let breaks: Set<Unicode.Scalar> = predicate == 0 ? ["\n", "\r", "é", "中"] : ["ÿ", "𝄞"]
        let isBreak: (Unicode.Scalar) -> Bool = { breaks.contains($0) }
        var oracle = Self.randomText(3_000, &random)
        var local = ReplicatingArray(oracle, replica: ReplicaID(1), paragraphBreak: isBreak)
        var remote = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(2), paragraphBreak: isBreak)
        for op in local.operations() { remote.integrate(op) }
        for step in 0..<150 {
            var ops: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            let n = oracle.count
            if n > 0, random.chance(0.4) {
                let at = random.below(n)
                let end = min(n, at + 1 + random.below(random.chance(0.3) ? 2_500 : 40))
                ops = local.removeSubrange(at..<end).map { [$0] } ?? []
                oracle.removeSubrange(at..<end)
            } else {
                var at = random.below(n + 1)
                for _ in 0..<(random.chance(0.5) ? 1 + random.below(20) : 1) {
                    let text = Self.randomText(random.chance(0.7) ? 1 : 1 + random.below(random.chance(0.3) ? 2_000 : 60), &random)
                    ops += local.insert(contentsOf: text, at: at).map { [$0] } ?? []
                    oracle.insert(contentsOf: text, at: at)
                    at += text.count
                }
            }
            for op in ops { remote.integrate(op) }
            let context = "predicate \(predicate) step \(step)"
            local._checkInvariants()
            remote._checkInvariants()
            #expect(local.elements == oracle, "\(context)")
            #expect(local.paragraphCount == oracle.filter(isBreak).count + 1, "\(context)")
            #expect(remote.paragraphCount == local.paragraphCount, "\(context)")
        }
        #expect(remote == local)
    }

    /// Elements that are not scalars (stored as they are, reference-counted here) through leaf
    /// splits and merges, with paragraphs, on a local copy and a remote one, against a plain array.
    @Test(arguments: testSeeds([301, 302]))
    func referenceCountedElementsThroughSplitsAndMerges(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let words = ["alpha", "beta", "\n", "a longer string that is surely not stored inline", "é中😀"]
        func randomWords(_ n: Int) -> [String] { (0..<n).map { _ in words[random.below(words.count)] + (random.chance(0.3) ? String(random.below(1_000)) : "") } }
        let isBreak: (String) -> Bool = { $0 == "\n" }
        var oracle = randomWords(2_500)
        var local = ReplicatingArray(oracle, replica: ReplicaID(1), paragraphBreak: isBreak)
        var remote = ReplicatingArray<String>(replica: ReplicaID(2), paragraphBreak: isBreak)
        for op in local.operations() { remote.integrate(op) }
        for step in 0..<200 {
            var ops: [ReplicatingArrayOperation<String>] = []
            let n = oracle.count
            if n > 0, random.chance(0.45) {
                let at = random.below(n)
                let end = min(n, at + 1 + random.below(random.chance(0.3) ? 2_000 : 30))
                ops = local.removeSubrange(at..<end).map { [$0] } ?? []
                oracle.removeSubrange(at..<end)
            } else {
                var at = random.below(n + 1)
                if random.chance(0.5) {
                    for _ in 0..<(1 + random.below(20)) {
                        let word = randomWords(1)
                        ops += local.insert(contentsOf: word, at: at).map { [$0] } ?? []
                        oracle.insert(contentsOf: word, at: at)
                        at += 1
                    }
                } else {
                    let pasted = randomWords(1 + random.below(random.chance(0.3) ? 2_000 : 50))
                    ops = local.insert(contentsOf: pasted, at: at).map { [$0] } ?? []
                    oracle.insert(contentsOf: pasted, at: at)
                }
            }
            for op in ops { remote.integrate(op) }
            local._checkInvariants()
            #expect(local.elements == oracle, "seed \(seed) step \(step)")
            let starts = [0] + oracle.indices.filter { isBreak(oracle[$0]) }.map { $0 + 1 }
            #expect(local.paragraphCount == starts.count, "seed \(seed) step \(step)")
            for start in local.leafStarts where start < oracle.count {
                #expect(local.paragraph(containing: start) == starts.lastIndex { $0 <= start }, "seed \(seed) step \(step)")
            }
        }
        remote._checkInvariants()
        #expect(remote.elements == oracle)
        #expect(remote == local)
    }

    /// A document of several bottom branches: cuts merge leaves of different branches, empty
    /// branches and shrink the tree; pastes grow it again. Reads (by index,
    /// by paragraph, by ID) between edits agree with a plain array; a remote copy follows.
    @Test(arguments: testSeeds([401, 402]))
    func mergesAcrossBranchesShrinkAndRegrowTheTree(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var oracle = Self.randomText(70_000, &random)
        var local = ReplicatingText(oracle.string, replica: ReplicaID(1))
        var remote = ReplicatingText(replica: ReplicaID(2))
        for op in local.operations() { remote.integrate(op) }
        #expect(local.scalars.storage.branches.count > 3, "seed \(seed): a tree of two levels")
        var sawBranchFreed = false
        for step in 0..<120 {
            var ops: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            let n = oracle.count
            if n > 0, random.chance(0.5) {
                // Mostly large cuts, ending at a leaf boundary now and then.
                let starts = local.scalars.leafStarts
                let at = random.chance(0.3) ? starts[random.below(starts.count)] : random.below(n)
                let end = random.chance(0.3) ? min(n, starts[random.below(starts.count)] + 1) : min(n, at + 1 + random.below(random.chance(0.6) ? 20_000 : 100))
                guard at < end else { continue }
                ops = local.replace(at..<end, with: [])
                oracle.removeSubrange(at..<end)
            } else if random.chance(0.5) {
                var at = random.below(n + 1)
                for _ in 0..<(1 + random.below(30)) {
                    let typed = Self.randomText(1, &random)
                    ops += local.replace(at..<at, with: typed)
                    oracle.insert(contentsOf: typed, at: at)
                    at += 1
                }
            } else {
                let at = random.below(n + 1)
                let pasted = Self.randomText(1 + random.below(random.chance(0.3) ? 15_000 : 500), &random)
                ops = local.replace(at..<at, with: pasted)
                oracle.insert(contentsOf: pasted, at: at)
            }
            for op in ops { remote.integrate(op) }
            if !local.scalars.storage.freeBranches.isEmpty { sawBranchFreed = true }
            let context = "seed \(seed) step \(step)"
            local.scalars._checkInvariants()
            #expect(local.count == oracle.count, "\(context)")
            for _ in 0..<5 where !oracle.isEmpty {
                let i = random.below(oracle.count)
                #expect(local.scalars[i] == oracle[i], "\(context) index \(i)")
                #expect(local.scalars.index(of: local.scalars.id(at: i)) == i, "\(context) index \(i)")
            }
            if step % 10 == 0 {
                #expect(local.scalars.elements == oracle, "\(context)")
                Self.checkLineQueries(local, oracle, context)
            }
        }
        #expect(sawBranchFreed, "seed \(seed): no branch was emptied by merges")
        remote.scalars._checkInvariants()
        #expect(local.scalars.elements == oracle)
        #expect(remote == local)
    }

    /// Line breaks as the last element of a leaf, the first of the next, empty lines across the
    /// boundary, a leaf holding nothing but breaks: every query at the boundaries, then again
    /// after the boundary's leaves are merged, split by a paste and typed into at their ends.
    @Test func breaksAtLeafBoundaries() {
        let piece = ReplicatingArrayStorage<Unicode.Scalar>.freshContentPerLeaf
        var oracle = Array(String(repeating: "é", count: piece - 1).unicodeScalars) + ["\n", "\n", "\n"]
        oracle += Array(String(repeating: "😀", count: piece - 3).unicodeScalars) + ["\n"]
        oracle += Array(repeating: "\n", count: piece)
        var text = ReplicatingText(oracle.string, replica: ReplicaID(1))
        #expect(text.scalars.leafStarts == [0, piece, 2 * piece])
        Self.checkLineQueries(text, oracle, "fresh")
        // Typing a break at the end of the first leaf and at the start of the second.
        for at in [piece, piece + 1, 2 * piece + 2] {
            text.replace(at..<at, with: ["\n"])
            oracle.insert("\n", at: at)
            text.scalars._checkInvariants()
            Self.checkLineQueries(text, oracle, "typed at \(at)")
        }
        // Most of the first two leaves cut: they merge, leaving breaks at the junction.
        text.replace(10..<(2 * piece - 10), with: [])
        oracle.removeSubrange(10..<(2 * piece - 10))
        text.scalars._checkInvariants()
        #expect(text.scalars.leafStarts.count == 2, "\(text.scalars.leafStarts)")
        Self.checkLineQueries(text, oracle, "merged")
        // A paste of breaks and wide scalars into the leaf of breaks splits it.
        let pasted = Array(String(repeating: "中\n\n", count: 700).unicodeScalars)
        text.replace(30..<30, with: pasted)
        oracle.insert(contentsOf: pasted, at: 30)
        text.scalars._checkInvariants()
        Self.checkLineQueries(text, oracle, "pasted")
        #expect(text.scalars.elements == oracle)
    }

    /// A compacted copy's state (document-order format 3) written while an insertion from a peer
    /// waits for the element it follows: decoded with `keepingWaitingOperations`, as the daemon
    /// reads its own snapshots, the insertion still waits, and lands once that element arrives.
    @Test func compactedStateKeepsWaitingOperations() throws {
        var local = ReplicatingText("hello world", replica: ReplicaID(1))
        var peer = ReplicatingText(replica: ReplicaID(2))
        for op in local.operations() { peer.integrate(op) }
        local.replace(0..<6, with: [])
        #expect(local.dropTombstones() == 6)
        let first = peer.replace(11..<11, with: Array("!".unicodeScalars))
        let second = peer.replace(12..<12, with: Array("?".unicodeScalars))
        for op in second { local.integrate(op) }
        #expect(local.scalars.pendingOperationCount == 1)
        var decoded = try ReplicatingText(decodingState: local.encodedState(), replica: ReplicaID(1), keepingWaitingOperations: true)
        #expect(decoded.scalars.pendingOperationCount == 1)
        for op in first { decoded.integrate(op) }
        #expect(decoded.string == "world!?")
    }

    /// The scalar offset of `position` (UTF-16 characters) in `scalars`.
    static func offset(of position: TextPosition, in scalars: [Unicode.Scalar]) -> Int {
        var line = 0
        var i = 0
        while line < position.line {
            precondition(i < scalars.count, "position past the mirror")
            if scalars[i] == "\n" { line += 1 }
            i += 1
        }
        var units = 0
        while units < position.character {
            units += UTF16.width(scalars[i])
            i += 1
        }
        return i
    }
}

/// Counts how much of a fuzz run went through frozen leaves (`FrozenRuns`): compactions that
/// left leaves frozen, and steps that thawed a leaf of a copy (edits, remote operations) while
/// other leaves stayed frozen; so a run that never exercised the compact form fails.
struct FrozenUse {
    var frozenLeaves = 0
    var thaws = 0
    var stepsOnFrozenCopies = 0

    /// A copy's storage and thaw count before a step.
    struct Watch {
        let storage: ObjectIdentifier
        let thawed: Int
        let frozen: Int
        init(_ text: ReplicatingText) {
            storage = ObjectIdentifier(text.scalars.storage)
            thawed = text.scalars.storage.thawedCount
            frozen = text.scalars.storage.frozenLeafCount
        }
    }

    mutating func compacted(_ text: ReplicatingText) {
        frozenLeaves += text.scalars.storage.frozenLeafCount
    }

    mutating func edited(_ before: Watch, _ text: ReplicatingText) {
        guard before.frozen > 0, ObjectIdentifier(text.scalars.storage) == before.storage else { return }
        stepsOnFrozenCopies += 1
        thaws += text.scalars.storage.thawedCount - before.thawed
    }

    func expectExercised(_ context: String) {
        #expect(frozenLeaves > 0, "\(context): no compaction left a frozen leaf")
        #expect(thaws > 0, "\(context): no edit thawed a frozen leaf")
        #expect(stepsOnFrozenCopies > 0, "\(context): no step edited a copy with frozen leaves")
    }
}

private func insertedCount(_ op: ReplicatingArrayOperation<Unicode.Scalar>) -> Int {
    if case .insert(let insertion) = op, case .elements = insertion.content { return insertion.count }
    return 0
}
