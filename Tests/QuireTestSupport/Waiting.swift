import Foundation
import JSON

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout` seconds; returns
/// whether it held. Tests wait on what they need, never a fixed time.
public func waitUntil(timeout: TimeInterval = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

extension TestEditor {
    /// Waits until this editor's daemon holds document `uri` with `characters` characters (a
    /// peer's copy arrived whole), so an open joins it rather than making a new one.
    @discardableResult
    public func waitForDocument(_ uri: String, characters: Int, timeout: TimeInterval = 20) -> Bool {
        waitUntil(timeout: timeout) {
            request("document/list")["result"]?.arrayValue?.contains { entry in
                entry["uri"] == .string(uri) && entry["characters"] == .integer(Int64(characters))
            } ?? false
        }
    }
}
