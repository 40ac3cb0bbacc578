// PLACEHOLDER until helper "scopes" lands its API in main (then this file goes).
import Foundation

extension Daemon {
    nonisolated(unsafe) private static var placeholderFrames: [ObjectIdentifier: WeakProjectFrames] = [:]

    /// Placeholder of the scopes branch's `Daemon.projectFrames`.
    var projectFrames: ProjectFrames? {
        get { Self.placeholderFrames[ObjectIdentifier(self)]?.value }
        set { Self.placeholderFrames[ObjectIdentifier(self)] = WeakProjectFrames(value: newValue) }
    }

    /// Placeholder of the scopes branch's `Daemon.addPeerSecret(_:scope:)`.
    func addPeerSecret(_ secret: [UInt8], scope: DocumentScope) {}
    /// Placeholder of the scopes branch's `Daemon.removePeerSecret(scope:)`.
    func removePeerSecret(scope: DocumentScope) {}
}

private struct WeakProjectFrames {
    weak var value: ProjectFrames?
}
