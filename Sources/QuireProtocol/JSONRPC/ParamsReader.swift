import JSON

/// Typed access to a message's `params` object; every failure is an Invalid params (-32602) error
/// naming the member's path, such as `params.changes[2].range.start.line: expected an integer, got string`.
public struct ParamsReader {
    public let members: [String: JSONValue]
    public let path: String

    /// Reads `params`, which must be an object or (when every member is optional) absent.
    public init(_ params: JSONValue?, path: String = "params") throws(ResponseError) {
        switch params {
        case nil: self.init(members: [:], path: path)
        case .object(let members)?: self.init(members: members, path: path)
        case let other?: throw .invalidParams("\(path): expected an object, got \(other.typeName)")
        }
    }

    init(members: [String: JSONValue], path: String) {
        self.members = members
        self.path = path
    }

    public func has(_ key: String) -> Bool { members[key] != nil && members[key] != .null }

    public func string(_ key: String) throws(ResponseError) -> String {
        guard let value = try optionalString(key) else { throw missing(key) }
        return value
    }

    public func optionalString(_ key: String) throws(ResponseError) -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case let other?: throw wrongType(key, "a string", other)
        }
    }

    public func int(_ key: String) throws(ResponseError) -> Int {
        guard let value = try optionalInt(key) else { throw missing(key) }
        return value
    }

    public func optionalInt(_ key: String) throws(ResponseError) -> Int? {
        switch members[key] {
        case nil, .null?: return nil
        case .integer(let i)?: return Int(i)
        case .double(let d)? where d == d.rounded() && abs(d) < 9.0e15: return Int(d)
        case .double(let d)?: throw .invalidParams("\(path).\(key): expected an integer, got \(d)")
        case let other?: throw wrongType(key, "an integer", other)
        }
    }

    public func nonNegativeInt(_ key: String) throws(ResponseError) -> Int {
        let value = try int(key)
        guard value >= 0 else { throw .invalidParams("\(path).\(key): must not be negative, got \(value)") }
        return value
    }

    /// An optional host name or address (`peer/listen`, `peer/connect`): 1 to 255 bytes of
    /// printable characters, no spaces or control characters, as DNS names and IP addresses are.
    public func optionalHost(_ key: String) throws(ResponseError) -> String? {
        guard let host = try optionalString(key) else { return nil }
        guard !host.isEmpty, host.utf8.count <= 255 else {
            throw .invalidParams("\(path).\(key): a host has 1 to 255 bytes, got \(host.utf8.count)")
        }
        guard Self.isPrintableHost(host) else {
            throw .invalidParams("\(path).\(key): a host has no spaces or control characters, got \(ResponseError.shownMethod(host))")
        }
        return host
    }

    /// Whether `host` has no spaces, control or invisible format characters (its length is
    /// checked apart); the one rule for hosts from editors and from the command line.
    public static func isPrintableHost(_ host: String) -> Bool {
        host.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value)
            && $0.properties.generalCategory != .format && !$0.properties.isWhitespace }
    }

    /// An optional integer that, when present, is not negative (an epoch or revision).
    public func optionalNonNegativeInt(_ key: String) throws(ResponseError) -> Int? {
        guard let value = try optionalInt(key) else { return nil }
        guard value >= 0 else { throw .invalidParams("\(path).\(key): must not be negative, got \(value)") }
        return value
    }

    public func optionalBool(_ key: String) throws(ResponseError) -> Bool? {
        switch members[key] {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        case let other?: throw wrongType(key, "a boolean", other)
        }
    }

    public func object(_ key: String) throws(ResponseError) -> ParamsReader {
        guard let value = try optionalObject(key) else { throw missing(key) }
        return value
    }

    public func optionalObject(_ key: String) throws(ResponseError) -> ParamsReader? {
        switch members[key] {
        case nil, .null?: return nil
        case .object(let o)?: return ParamsReader(members: o, path: "\(path).\(key)")
        case let other?: throw wrongType(key, "an object", other)
        }
    }

    /// The objects of an array member, each with its indexed path.
    public func objects(_ key: String) throws(ResponseError) -> [ParamsReader] {
        guard let items = try optionalArray(key) else { throw missing(key) }
        var readers: [ParamsReader] = []
        for (i, item) in items.enumerated() {
            guard case .object(let o) = item else { throw .invalidParams("\(path).\(key)[\(i)]: expected an object, got \(item.typeName)") }
            readers.append(ParamsReader(members: o, path: "\(path).\(key)[\(i)]"))
        }
        return readers
    }

    public func strings(_ key: String) throws(ResponseError) -> [String]? {
        guard let items = try optionalArray(key) else { return nil }
        var result: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { throw .invalidParams("\(path).\(key)[\(i)]: expected a string, got \(item.typeName)") }
            result.append(s)
        }
        return result
    }

    public func optionalArray(_ key: String) throws(ResponseError) -> [JSONValue]? {
        switch members[key] {
        case nil, .null?: return nil
        case .array(let a)?: return a
        case let other?: throw wrongType(key, "an array", other)
        }
    }

    private func missing(_ key: String) -> ResponseError { .invalidParams("\(path).\(key): missing") }

    private func wrongType(_ key: String, _ expected: String, _ got: JSONValue) -> ResponseError {
        .invalidParams("\(path).\(key): expected \(expected), got \(got.typeName)")
    }
}
