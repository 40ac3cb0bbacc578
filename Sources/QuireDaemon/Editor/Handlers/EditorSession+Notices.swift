import JSON
import QuireProtocol
import ReplicatingTypes

// What the daemon tells the editor unasked, as structured notifications the client words.

extension EditorSession {
    /// Shows `message`, a failure the daemon describes, to the editor's user as an error
    /// (`window/showMessage`, type 1).
    func showError(_ message: String) {
        notify(ShowMessageNotification(type: .error, message: message))
    }

    /// Shows `message` to the editor's user as a warning (`window/showMessage`, type 2), once
    /// the session runs.
    func showWarning(_ message: String) {
        guard state == .running else { return }
        notify(ShowMessageNotification(type: .warning, message: message))
    }

    /// `peer/changed`: a peer joined, left or failed. `link` 0 stands for several attempts told
    /// in one summary, or a connection refused before it became a link.
    func sendPeerChange(link: Int, event: String, user: String, address: String, reason: String?) {
        guard state == .running else { return }
        notify(PeerChangedNotification(link: link, event: event, user: user, address: address, reason: reason,
                                       linksUp: daemon.establishedLinkCount))
    }

    /// `document/forked`: a peer's document named `uri`, created separately, is kept here as
    /// `copy`; `user` and `address` name the peer (`user` nil or empty when unknown).
    func sendDocumentForked(uri: String, copy: String, user: String?, address: String) {
        guard state == .running else { return }
        notify(DocumentForkedNotification(uri: uri, copy: copy, user: user ?? "", address: address))
    }
}
