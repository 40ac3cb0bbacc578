import JSON
import QuireProtocol
import ReplicatingTypes
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// The session dispatches by the registry: every message an editor may send has a handler, so
/// none answers `Method not found` by being forgotten.
@Suite struct SessionDispatchTests {
    @Test func everyRegisteredRequestHasAHandler() {
        for type in MessageRegistry.requests {
            #expect(type is any SessionRequest.Type, "\(type.method) has no SessionRequest conformance")
        }
    }

    @Test func everyRegisteredNotificationHasAHandler() {
        for type in MessageRegistry.editorNotifications {
            #expect(type is any SessionNotification.Type, "\(type.method) has no SessionNotification conformance")
        }
        let anyState = MessageRegistry.editorNotifications.compactMap { $0 as? any SessionNotification.Type }
            .filter { $0.acceptedInAnyState }.map { $0.method }.sorted()
        #expect(anyState == ["$/cancelRequest", "exit"])
    }

    @Test func unknownMethodsAreNotFoundAndNothingAnswersBeforeInitialize() {
        var next: UInt64 = 0
        let editor = TestEditor(daemon: Daemon(replicaSource: { next += 1; return ReplicaID(next) }))
        #expect(editor.request("document/list")["error"]?["code"] == -32002)
        editor.initialize()
        #expect(editor.request("document/nope")["error"]?["code"] == -32601)
        #expect(editor.request("cursor/update", ["uri": "a", "revision": 0, "selections": []])["error"]?["code"] == -32601,
                "a notification-only method is no request")
        #expect(editor.request("document/list")["result"] == [])
    }
}
