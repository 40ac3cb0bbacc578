import JSON

/// `project/share` (editor -> daemon, request): shares a folder as a project
/// (protocol/decisions/project-sharing.md), or one file by itself as a project of one file
/// (protocol/decisions/roles.md, *A file shared by itself*). `root`: an absolute folder or
/// regular file (default: the project root above the daemon's working folder); `listen`: where
/// to accept the partner (`host:port`, at most 8, default all interfaces on a free port);
/// `relay`: a relay (`host:port`) both sides dial instead of or besides the addresses. The reply
/// says the project's key, name and root, the join line to hand the partner, the files shared,
/// those left out with why, the addresses the line holds, and the file shared by itself.
public struct ProjectShareRequest: EditorRequest, Equatable {
    public static let method = "project/share"
    /// At most this many listening addresses.
    public static let maximumListen = 8

    public var root: String?
    public var listen: [HostPort]
    public var relay: HostPort?

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        root = try reader.optionalString("root")
        if let root {
            guard root.hasPrefix("/"), root.utf8.count <= 4096 else {
                throw .invalidParams("params.root: must be an absolute path of at most 4096 bytes, got \(ResponseError.shownMethod(root))")
            }
            guard !root.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalidParams("params.root: a path has no control characters, got \(ResponseError.shownMethod(root))")
            }
        }
        let specs = try reader.strings("listen") ?? []
        guard specs.count <= Self.maximumListen else {
            throw .invalidParams("params.listen: at most \(Self.maximumListen) addresses, got \(specs.count)")
        }
        var listen: [HostPort] = []
        for (index, spec) in specs.enumerated() {
            listen.append(try HostPort(spec, path: "params.listen[\(index)]", allowsPortZero: true))
        }
        self.listen = listen
        relay = try reader.optionalString("relay").map { spec throws(ResponseError) in
            try HostPort(spec, path: "params.relay", allowsPortZero: false)
        }
    }

    /// `{key, name, root, line, files, skipped, addresses, file?}`: for a file shared by
    /// itself, `root` is its folder and `file` the file (absolute).
    public struct Result: MessageResult, Equatable {
        public var key: String
        public var name: String
        public var root: String
        public var line: String
        public var files: Int
        public var skipped: [Skipped]
        public var addresses: [String]
        public var file: String?

        public init(key: String, name: String, root: String, line: String, files: Int, skipped: [Skipped], addresses: [String],
                    file: String? = nil) {
            self.key = key
            self.name = name
            self.root = root
            self.line = line
            self.files = files
            self.skipped = skipped
            self.addresses = addresses
            self.file = file
        }

        public var json: JSONValue {
            var fields: [String: JSONValue] = [
                "key": .string(key), "name": .string(name), "root": .string(root), "line": .string(line),
                "files": .integer(Int64(files)), "skipped": .array(skipped.map(\.json)),
                "addresses": .array(addresses.map(JSONValue.string)),
            ]
            if let file { fields["file"] = .string(file) }
            return .object(fields)
        }
    }

    /// A file left out of the project, with why (`binary`, `symbolic link`, ...).
    public struct Skipped: Sendable, Equatable {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        public var json: JSONValue { ["path": .string(path), "reason": .string(reason)] }
    }
}

/// A `host:port` from an editor: a host name or IPv4 address, or an IPv6 address in brackets,
/// and a TCP port. Bounded: the host is 1 to 255 printable bytes (`ParamsReader.isPrintableHost`).
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `spec`; errors name `path`.
    public init(_ spec: String, path: String, allowsPortZero: Bool) throws(ResponseError) {
        let shown = ResponseError.shownMethod(spec)
        guard spec.utf8.count <= 300, let colon = spec.lastIndex(of: ":") else {
            throw .invalidParams("\(path): expected host:port, got \(shown)")
        }
        var host = String(spec[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count >= 2 { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.utf8.count <= 255, ParamsReader.isPrintableHost(host) else {
            throw .invalidParams("\(path): a host has 1 to 255 bytes and no spaces or control characters, got \(shown)")
        }
        let portText = spec[spec.index(after: colon)...]
        guard portText.count <= 5, let port = Int(portText), (allowsPortZero ? 0 : 1)...65535 ~= port else {
            throw .invalidParams("\(path): the port is \(allowsPortZero ? 0 : 1) to 65535, got \(shown)")
        }
        self.host = host
        self.port = port
    }

    /// `host:port`, IPv6 in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
