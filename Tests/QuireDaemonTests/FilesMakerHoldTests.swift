import Dispatch
import Foundation
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// The files maker's thread starts no round while a bulk write of project files holds it (a
/// joined project's files being written), and counts its quiet moment from the end of the
/// write; `finish()` still hurries it past a hold.
@Suite struct FilesMakerHoldTests {
    func maker() -> DocumentFilesMaker {
        let path = DaemonProcess.temporaryDirectory("maker-hold")
        return DocumentFilesMaker(packsPath: path + "/packs", documentsPath: path + "/documents", firstNumber: 1)
    }

    func mayStart(_ maker: DocumentFilesMaker, at now: UInt64) -> Bool {
        maker.condition.lock()
        defer { maker.condition.unlock() }
        return maker.mayStartRound(at: now)
    }

    @Test func aHoldKeepsTheThreadWaitingHoweverLongItLasts() throws {
        let maker = maker()
        let quiet = DocumentFilesMaker.quietNanoseconds
        let muchLater = DispatchTime.now().uptimeNanoseconds + 100 * quiet
        #expect(mayStart(maker, at: muchLater), "quiet for long: a round may start")
        maker.holdWhile {
            #expect(!mayStart(maker, at: muchLater))
            maker.holdWhile { #expect(!mayStart(maker, at: muchLater)) }
            #expect(!mayStart(maker, at: muchLater), "the outer hold still holds")
        }
        let ended = DispatchTime.now().uptimeNanoseconds
        #expect(!mayStart(maker, at: ended), "the quiet moment counts from the end of the write")
        #expect(mayStart(maker, at: ended + quiet + 1_000_000))
    }

    @Test func aTimedHoldLastsItsTimeAndOnlyGrows() {
        let maker = maker()
        let quiet = DocumentFilesMaker.quietNanoseconds
        let start = DispatchTime.now().uptimeNanoseconds
        maker.holdFor(nanoseconds: 5 * quiet)
        #expect(!mayStart(maker, at: start + 2 * quiet), "quiet for longer than usual, but held")
        maker.holdFor(nanoseconds: 1)   // a shorter hold does not cut a longer one
        #expect(!mayStart(maker, at: start + 4 * quiet))
        #expect(mayStart(maker, at: DispatchTime.now().uptimeNanoseconds + 5 * quiet + 1_000_000))
    }

    @Test func aWriteThatThrowsLetsGoOfItsHold() {
        struct Failed: Error {}
        let maker = maker()
        #expect(throws: Failed.self) { try maker.holdWhile { throw Failed() } }
        #expect(mayStart(maker, at: DispatchTime.now().uptimeNanoseconds + 2 * DocumentFilesMaker.quietNanoseconds))
    }

    @Test func finishHurriesPastAHold() {
        let maker = maker()
        maker.holdWhile {
            maker.condition.lock()
            maker.hurry = true
            maker.condition.unlock()
            #expect(mayStart(maker, at: 0))
        }
    }
}
