import JSON

/// The error member of a JSON-RPC response: `{code, message, data?}`. Codes are listed in
/// `protocol/errors.md`; the constructors below are the only ones the daemon uses.
public struct ResponseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["code": .integer(Int64(code)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    public var description: String { "\(code): \(message)" }

    // JSON-RPC 2.0
    public static let parseErrorCode = -32700
    public static let invalidRequestCode = -32600
    public static let methodNotFoundCode = -32601
    public static let invalidParamsCode = -32602
    public static let internalErrorCode = -32603
    // LSP
    public static let serverNotInitializedCode = -32002
    public static let requestCancelledCode = -32800
    // Quire, -32000...-32099
    public static let unknownDocumentCode = -32010
    public static let positionOutOfRangeCode = -32011
    public static let revisionFromFutureCode = -32012
    public static let documentAlreadyOpenCode = -32013
    public static let staleEpochCode = -32014
    public static let resyncNeededCode = -32015
    public static let unavailableCode = -32016
    public static let documentDiffersCode = -32017
    public static let documentTooLargeCode = -32018
    public static let readOnlyCode = -32019

    public static func parseError(_ detail: String) -> ResponseError {
        ResponseError(code: parseErrorCode, message: "Parse error: \(detail)")
    }
    public static func invalidRequest(_ detail: String) -> ResponseError {
        ResponseError(code: invalidRequestCode, message: "Invalid Request: \(detail)")
    }
    public static func methodNotFound(_ method: String) -> ResponseError {
        ResponseError(code: methodNotFoundCode, message: "Method not found: \(shownMethod(method))")
    }

    /// A method name from outside as messages and logs show it: as sent when it is short and
    /// printable, else quoted with its control characters escaped and cut to 100 characters, so
    /// it can neither forge a log line nor send escape sequences to a terminal.
    public static func shownMethod(_ method: String) -> String {
        func isPlain(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII ? (0x21...0x7E).contains(scalar.value) : !scalar.properties.generalCategory.isInvisible
        }
        let scalars = method.unicodeScalars
        guard scalars.count > 100 || !scalars.allSatisfy(isPlain) else { return method }
        var shown = "\""
        for scalar in scalars.prefix(100) {
            switch scalar {
            case "\"", "\\": shown += "\\\(scalar)"
            case "\n": shown += "\\n"
            case _ where isPlain(scalar) || scalar == " ": shown.unicodeScalars.append(scalar)
            default: shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return shown + (scalars.count > 100 ? "\"…" : "\"")
    }
    public static func invalidParams(_ detail: String) -> ResponseError {
        ResponseError(code: invalidParamsCode, message: "Invalid params: \(detail)")
    }
    public static func internalError(_ detail: String) -> ResponseError {
        ResponseError(code: internalErrorCode, message: "Internal error: \(detail)")
    }
    public static let serverNotInitialized = ResponseError(code: serverNotInitializedCode, message: "Server not initialized: send initialize first")
    public static func unknownDocument(_ uri: String) -> ResponseError {
        ResponseError(code: unknownDocumentCode, message: "Unknown document \(uri.debugDescription): open it first", data: ["uri": .string(uri)])
    }
    public static func positionOutOfRange(_ detail: String) -> ResponseError {
        ResponseError(code: positionOutOfRangeCode, message: "Position out of range: \(detail)")
    }
    public static func revisionFromFuture(got: Int, latest: Int) -> ResponseError {
        ResponseError(code: revisionFromFutureCode, message: "Revision \(got) was never sent: the latest daemon revision is \(latest)",
                      data: ["revision": .integer(Int64(got)), "latest": .integer(Int64(latest))])
    }
    public static func documentAlreadyOpen(_ uri: String) -> ResponseError {
        ResponseError(code: documentAlreadyOpenCode, message: "Document \(uri.debugDescription) is already open in this session")
    }
    /// An editor edit after one of the same epoch was refused: it was based on text the daemon
    /// does not have, so the editor must resync (keeping its text) before editing on.
    public static func resyncNeeded(epoch: Int, reason: String) -> ResponseError {
        ResponseError(code: resyncNeededCode,
                      message: "An earlier edit of epoch \(epoch) was refused (\(reason)); resync the document, sending its text with its epoch and revision, before editing on",
                      data: ["epoch": .integer(Int64(epoch))])
    }

    /// `document/open` of a document that exists with other text, when nothing says what the
    /// editor's text has in common with it: the daemon changed nothing, and the editor asks the
    /// person whether to take the shared text or merge both (`conflict`), or to open its text
    /// under another name.
    public static func documentDiffers(uri: String, characters: Int) -> ResponseError {
        ResponseError(code: documentDiffersCode,
                      message: "\(uri.debugDescription) is already shared with other text (\(characters) characters): take the shared text, merge yours into it, or open yours under another name",
                      data: ["uri": .string(uri), "characters": .integer(Int64(characters)), "choices": ["take", "merge"]])
    }

    /// A local edit (or open, resync, merge, undo, a bound file's outside change) that would
    /// take a document past the elements a document may hold, which every peer refuses: the
    /// daemon changed nothing. `elements`: what the document holds, removed characters included;
    /// `adding`: what the edit would add; `limit`: the most it may hold.
    public static func documentTooLarge(uri: String, elements: UInt64, adding: Int, limit: Int) -> ResponseError {
        ResponseError(code: documentTooLargeCode,
                      message: "\(uri.debugDescription) cannot take \(adding) more characters: it holds \(elements), counting removed ones "
                          + "until they are dropped, and a document may hold at most \(limit) (peers refuse more); nothing changed",
                      data: ["uri": .string(uri), "elements": .integer(Int64(clamping: elements)), "adding": .integer(Int64(adding)),
                             "limit": .integer(Int64(limit))])
    }

    /// An edit (or undo, redo, merge, a resync or open carrying other text) of document `uri`,
    /// which belongs to project `key` (called `name`) where this daemon's role `role` does not
    /// allow writing (protocol/decisions/roles.md): the daemon changed nothing. `role` nil: the
    /// project's roster does not name this daemon.
    public static func readOnly(uri: String, key: String, name: String, role: String?) -> ResponseError {
        let reason = readOnlyReason(project: name, role: role)
        var data: [String: JSONValue] = ["uri": .string(uri), "project": .string(name), "key": .string(key), "reason": .string(reason)]
        if let role { data["role"] = .string(role) }
        return ResponseError(code: readOnlyCode, message: "\(uri.debugDescription) is read-only here: \(reason); nothing changed",
                             data: .object(data))
    }

    /// Why a project's documents are read-only for a daemon with `role` in it, as a client may
    /// show it: "you can read notes but not change it (role read)".
    public static func readOnlyReason(project: String, role: String?) -> String {
        "you can read \(project) but not change it (\(role.map { "role \($0)" } ?? "no role"))"
    }

    public static func staleEpoch(got: Int, current: Int) -> ResponseError {
        ResponseError(code: staleEpochCode, message: "Epoch \(got) is over: the document was resynced to epoch \(current)",
                      data: ["epoch": .integer(Int64(got)), "current": .integer(Int64(current))])
    }
}

private extension Unicode.GeneralCategory {
    /// Control, format, separator, surrogate, private-use and unassigned scalars.
    var isInvisible: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }
}
