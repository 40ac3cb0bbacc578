import Crypto
import EditingTraces
import QuireProject
import ReplicatingTypes
import Testing

/// The replicated roster (protocol/decisions/roles.md): who may change roles, signatures that
/// cannot be forged or altered, one outcome for concurrent changes, and always an owner.
@Suite struct ProjectRosterTests {
    static let project = "3fa29c1b00d4e6f1"

    struct Person {
        let signer = Curve25519.Signing.PrivateKey()
        var key: MemberKey { MemberKey(Array(signer.publicKey.rawRepresentation))! }
    }

    @Test func theFounderIsTheOneOwnerAndOnlyOwnersChangeRoles() throws {
        let ann = Person(), bob = Person(), cy = Person()
        var roster = ProjectRoster(projectKey: Self.project, founder: ann.key)
        #expect(roster.role(of: ann.key) == .owner)
        #expect(roster.role(of: bob.key) == nil)
        try roster.change(bob.key, to: .write, signer: ann.signer)
        try roster.change(cy.key, to: .read, signer: ann.signer)
        #expect(roster.roles == [ann.key: .owner, bob.key: .write, cy.key: .read])
        #expect(throws: RosterRefusal.notAnOwner) { try roster.change(cy.key, to: .write, signer: bob.signer) }
        #expect(throws: RosterRefusal.notAnOwner) { try roster.change(ann.key, to: nil, signer: bob.signer) }
        #expect(throws: RosterRefusal.notAnOwner) { try roster.change(cy.key, to: .owner, signer: cy.signer) }
        #expect(roster.roles == [ann.key: .owner, bob.key: .write, cy.key: .read])
    }

    @Test func aWritersSignedChangeArrivingFromAPeerChangesNothing() throws {
        let ann = Person(), bob = Person()
        var roster = ProjectRoster(projectKey: Self.project, founder: ann.key)
        try roster.change(bob.key, to: .write, signer: ann.signer)
        // Bob's daemon signs a removal of the owner and a promotion of itself; another daemon keeps
        // them (they verify) but they take no effect: Bob is no owner at that point of the replay.
        let removal = try RosterChange.signed(subject: ann.key, role: nil, counter: 9, projectKey: Self.project, signer: bob.signer)
        let promotion = try RosterChange.signed(subject: bob.key, role: .owner, counter: 10, projectKey: Self.project, signer: bob.signer)
        #expect(try roster.apply(contentsOf: [removal, promotion]) == 2)
        #expect(roster.roles == [ann.key: .owner, bob.key: .write])
    }

    @Test func forgedAlteredOrMisdirectedChangesAreRefusedWhole() throws {
        let ann = Person(), bob = Person(), eve = Person()
        var roster = ProjectRoster(projectKey: Self.project, founder: ann.key)
        let good = try RosterChange.signed(subject: bob.key, role: .read, counter: 1, projectKey: Self.project, signer: ann.signer)
        var bytes = RosterChange.encode([good])
        // The role byte sits after the version, the count and the 32-byte subject.
        bytes[2 + 32] = 3
        let altered = try RosterChange.decode(bytes)
        #expect(throws: RosterRefusal.badSignature) { try roster.apply(contentsOf: altered) }
        let elsewhere = try RosterChange.signed(subject: bob.key, role: .owner, counter: 1, projectKey: "0000000000000000", signer: ann.signer)
        #expect(throws: RosterRefusal.badSignature) { try roster.apply(elsewhere) }
        // Eve signs in Ann's name: the signature is Eve's, the author field Ann's.
        let eves = try RosterChange.signed(subject: eve.key, role: .owner, counter: 1, projectKey: Self.project, signer: eve.signer)
        var forged = RosterChange.encode([eves])
        let authorAt = 2 + 32 + 1 + 1
        forged.replaceSubrange(authorAt..<(authorAt + 32), with: ann.key.bytes)
        #expect(throws: RosterRefusal.badSignature) { try roster.apply(contentsOf: try RosterChange.decode(forged)) }
        // A batch with one bad change applies none of it.
        #expect(throws: RosterRefusal.badSignature) { try roster.apply(contentsOf: [good] + altered) }
        #expect(roster.changes.isEmpty)
        #expect(try roster.apply(good))
        #expect(try !roster.apply(good), "a duplicate changes nothing")
        #expect(roster.role(of: bob.key) == .read)
    }

    @Test func theLastOwnerStaysWhateverIsAsked() throws {
        let ann = Person(), bob = Person()
        var roster = ProjectRoster(projectKey: Self.project, founder: ann.key)
        #expect(throws: RosterRefusal.lastOwner) { try roster.change(ann.key, to: .write, signer: ann.signer) }
        #expect(throws: RosterRefusal.lastOwner) { try roster.change(ann.key, to: nil, signer: ann.signer) }
        try roster.change(bob.key, to: .owner, signer: ann.signer)
        try roster.change(ann.key, to: nil, signer: ann.signer)
        #expect(roster.roles == [bob.key: .owner])
        #expect(roster.removed == [ann.key])
        // Signed anyway (a daemon that does not check) and replayed: skipped, Bob stays owner.
        let selfRemoval = try RosterChange.signed(subject: bob.key, role: .read, counter: 50, projectKey: Self.project, signer: bob.signer)
        try roster.apply(selfRemoval)
        #expect(roster.roles == [bob.key: .owner])
    }

    @Test func twoOwnersRemovingEachOtherAtOnceLeaveOneOwnerTheSameEverywhere() throws {
        let ann = Person(), bob = Person()
        var base = ProjectRoster(projectKey: Self.project, founder: ann.key)
        try base.change(bob.key, to: .owner, signer: ann.signer)
        var annsCopy = base, bobsCopy = base
        let byAnn = try annsCopy.change(bob.key, to: nil, signer: ann.signer)
        let byBob = try bobsCopy.change(ann.key, to: nil, signer: bob.signer)
        #expect(byAnn.counter == byBob.counter, "made concurrently: the same counter")
        try annsCopy.apply(byBob)
        try bobsCopy.apply(byAnn)
        #expect(annsCopy == bobsCopy)
        #expect(annsCopy.roles == bobsCopy.roles)
        #expect(annsCopy.roles.count == 1 && annsCopy.roles.values.first == .owner)
        // The one whose change comes first in the replay order (smaller author key) stays.
        let winner = min(ann.key, bob.key)
        #expect(annsCopy.roles == [winner: .owner])
    }

    @Test func changesARemovedOwnerMadeAfterTheRemovalDoNotCount() throws {
        let ann = Person(), bob = Person(), dan = Person()
        var ann1 = ProjectRoster(projectKey: Self.project, founder: ann.key)
        try ann1.change(bob.key, to: .owner, signer: ann.signer)
        var bob1 = ann1
        let removeBob = try ann1.change(bob.key, to: nil, signer: ann.signer)          // counter 2, Ann offline
        _ = try bob1.change(ann.key, to: .owner, signer: bob.signer)                     // counter 2 (no effect either way)
        let addDan = try bob1.change(dan.key, to: .write, signer: bob.signer)           // counter 3, after the removal
        #expect(bob1.role(of: dan.key) == .write)
        try bob1.apply(removeBob)
        #expect(bob1.role(of: dan.key) == nil, "Bob was no owner when he added Dan")
        try ann1.apply(contentsOf: Array(bob1.changes))
        #expect(ann1.roles == bob1.roles)
        #expect(ann1.role(of: bob.key) == nil && ann1.removed.contains(bob.key))
        _ = addDan
    }

    @Test func threeCopiesConvergeUnderAnyDeliveryOrder() throws {
        for seed in 1...25 {
            var random = SeededRandom(seed: UInt64(seed))
            let people = (0..<5).map { _ in Person() }
            var copies = (0..<3).map { _ in ProjectRoster(projectKey: Self.project, founder: people[0].key) }
            var inFlight: [(to: Int, change: RosterChange)] = []
            for _ in 0..<60 {
                let at = random.below(3)
                if random.below(3) == 0, !inFlight.isEmpty {
                    let index = random.below(inFlight.count)
                    let delivery = inFlight[index]
                    if random.below(4) != 0 { inFlight.remove(at: index) }   // sometimes duplicated
                    try copies[delivery.to].apply(delivery.change)
                    continue
                }
                let actor = people[random.below(people.count)]
                let subject = people[random.below(people.count)]
                let role: ProjectRole? = [nil, .read, .write, .owner][random.below(4)]
                guard let change = try? copies[at].change(subject.key, to: role, signer: actor.signer) else { continue }
                for other in 0..<3 where other != at { inFlight.append((other, change)) }
            }
            for delivery in inFlight.shuffled(using: &random) { try copies[delivery.to].apply(delivery.change) }
            #expect(copies[0] == copies[1] && copies[1] == copies[2], "seed \(seed)")
            #expect(copies[0].roles == copies[1].roles && copies[1].roles == copies[2].roles, "seed \(seed)")
            #expect(copies[0].roles.values.contains(.owner), "seed \(seed): always an owner")
            let merged = copies[0].merged(with: copies[1])
            #expect(merged == copies[2] && merged.merged(with: merged) == merged)
        }
    }

    @Test func theBinaryFormRoundTripsAndRefusesDamage() throws {
        let ann = Person(), bob = Person()
        var roster = ProjectRoster(projectKey: Self.project, founder: ann.key)
        try roster.change(bob.key, to: .write, signer: ann.signer)
        try roster.change(bob.key, to: .read, signer: ann.signer)
        let bytes = RosterChange.encode(roster.orderedChanges)
        #expect(try RosterChange.decode(bytes) == roster.orderedChanges)
        for cut in 0..<bytes.count {
            #expect(throws: BinaryDecodingError.self) { try RosterChange.decode(Array(bytes.prefix(cut))) }
        }
        #expect(throws: BinaryDecodingError.self) { try RosterChange.decode(bytes + [0]) }
        var badRole = bytes
        badRole[2 + 32] = 7
        #expect(throws: BinaryDecodingError.invalid("a roster change's role is 7; 0 to 3 expected")) { try RosterChange.decode(badRole) }
        var huge: [UInt8] = [RosterChange.binaryVersion]
        var writer = BinaryWriter()
        writer.writeVarint(UInt64(ProjectRoster.maximumChanges + 1))
        huge += writer.bytes
        #expect(throws: BinaryDecodingError.self) { try RosterChange.decode(huge) }
    }

    @Test func theRosterIsBoundedInChangesAndKeys() throws {
        let ann = Person()
        var roster = ProjectRoster(projectKey: Self.project, founder: ann.key)
        let keys = (0..<(ProjectRoster.maximumMembers - 1)).map { index -> MemberKey in
            var bytes = [UInt8](repeating: 0, count: 32)
            bytes[0] = UInt8(index >> 8)
            bytes[1] = UInt8(index & 0xFF)
            bytes[31] = 1
            return MemberKey(bytes)!
        }
        var batch: [RosterChange] = []
        for (index, key) in keys.enumerated() {
            batch.append(try RosterChange.signed(subject: key, role: .read, counter: UInt64(index + 1), projectKey: Self.project, signer: ann.signer))
        }
        #expect(try roster.apply(contentsOf: batch) == keys.count)
        #expect(roster.roles.count == ProjectRoster.maximumMembers)
        let oneMore = Person()
        #expect(throws: RosterRefusal.tooManyMembers) { try roster.change(oneMore.key, to: .read, signer: ann.signer) }
        #expect(roster.role(of: oneMore.key) == nil)
        // Changes about known keys still go in, up to the bound on changes.
        var more: [RosterChange] = []
        for counter in UInt64(keys.count + 1)...UInt64(ProjectRoster.maximumChanges) {
            more.append(try RosterChange.signed(subject: keys[Int(counter) % keys.count], role: .write, counter: counter,
                                                projectKey: Self.project, signer: ann.signer))
        }
        #expect(try roster.apply(contentsOf: more) == more.count)
        #expect(roster.changes.count == ProjectRoster.maximumChanges)
        #expect(throws: RosterRefusal.tooManyChanges) { try roster.change(keys[0], to: .read, signer: ann.signer) }
    }
}
