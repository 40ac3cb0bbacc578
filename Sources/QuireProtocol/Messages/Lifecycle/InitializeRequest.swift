import JSON

/// `initialize` (editor -> daemon, request): the first message of a session. The editor offers
/// position encodings in order of preference; the reply picks the first the daemon supports
/// (`utf-16` when none is offered, as in LSP).
public struct InitializeRequest: EditorRequest, Equatable {
    public static let method = "initialize"

    public var protocolVersion: Int?
    public var clientName: String?
    public var clientVersion: String?
    public var user: WireUser?
    public var positionEncodings: [String]

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        protocolVersion = try reader.optionalInt("protocolVersion")
        if let client = try reader.optionalObject("clientInfo") {
            clientName = try client.optionalString("name")
            clientVersion = try client.optionalString("version")
        }
        // A name is optional: without one the daemon names the person (git's user.name, $USER, ...).
        user = try reader.optionalObject("user").map { (r: ParamsReader) throws(ResponseError) in
            WireUser(name: try r.optionalString("name") ?? "", color: try r.optionalString("color"))
        }
        let general = try reader.optionalObject("capabilities")?.optionalObject("general")
        positionEncodings = try general?.strings("positionEncodings") ?? []
    }

    /// The reply: what the daemon chose and what it can do.
    public struct Result: MessageResult {
        public var protocolVersion: Int
        public var serverVersion: String
        public var positionEncoding: String
        public var sessionID: Int
        public var replica: String
        /// The name (and colour) others are shown for this editor: the one it gave, or the
        /// daemon's when it gave none.
        public var user: WireUser?

        public init(protocolVersion: Int, serverVersion: String, positionEncoding: String, sessionID: Int, replica: String,
                    user: WireUser? = nil) {
            self.protocolVersion = protocolVersion
            self.serverVersion = serverVersion
            self.positionEncoding = positionEncoding
            self.sessionID = sessionID
            self.replica = replica
            self.user = user
        }

        public var json: JSONValue {
            var result: [String: JSONValue] = [
                "protocolVersion": .integer(Int64(protocolVersion)),
                "serverInfo": ["name": "quire", "version": .string(serverVersion)],
                "sessionId": .integer(Int64(sessionID)),
                "replica": .string(replica),
                "capabilities": [
                    "positionEncoding": .string(positionEncoding),
                    "changeKinds": ["range", "lines", "full"],
                    "textHash": "sha256",
                    "cursors": true,
                    "batches": true,
                    "undo": true,
                    "files": true,
                ],
            ]
            if let user { result["user"] = user.json }
            return .object(result)
        }
    }
}
