import JSON

/// `window/showMessage` (daemon -> editor, notification), as in LSP: a failure the editor shows
/// its user as it is, for which there is no message of its own (the data directory failing, a
/// bound file's outside change that could not be merged). `message` is the daemon's description
/// of the failure; what to do about it is the client's to say.
public struct ShowMessageNotification: DaemonNotification, Equatable {
    public static let method = "window/showMessage"

    /// LSP's message types.
    public enum Kind: Int, Sendable {
        case error = 1, warning = 2, info = 3, log = 4
    }

    public var type: Kind
    public var message: String

    public init(type: Kind, message: String) {
        self.type = type
        self.message = message
    }

    public var json: JSONValue { ["type": .integer(Int64(type.rawValue)), "message": .string(message)] }
}
