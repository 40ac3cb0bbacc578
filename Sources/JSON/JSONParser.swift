import CJansson

/// Parses JSON with jansson: `json_loadb` over an exact byte count (never a C string), any top-level
/// value (`JSON_DECODE_ANY`), embedded NUL allowed in strings (`JSON_ALLOW_NUL`).
///
/// Guarantees: invalid UTF-8, nesting deeper than `maximumDepth` (and jansson's own 2048 limit) and
/// integers outside Int64 are errors, never crashes; the result owns no C memory.
/// `JSONFastReader` reads the common shapes first, in one copy; whatever it does not read to the
/// end goes to jansson, so what is accepted, to what value, and every error are jansson's.
public struct JSONParser: Sendable {
    /// Arrays and objects nested deeper than this are rejected.
    public var maximumDepth: Int

    public init(maximumDepth: Int = 512) {
        self.maximumDepth = maximumDepth
    }

    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withContiguousStorageIfAvailable { buffer in
            parse(buffer: UnsafeRawBufferPointer(buffer))
        } ?? Array(bytes).withUnsafeBytes { parse(buffer: $0) }
        return try result.get()
    }

    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { parse(buffer: UnsafeRawBufferPointer($0)) }
        return try result.get()
    }

    private func parse(buffer: UnsafeRawBufferPointer) -> Result<JSONValue, JSONParseError> {
        var reader = JSONFastReader(buffer.assumingMemoryBound(to: UInt8.self), maximumDepth: maximumDepth)
        if let value = reader.read() { return .success(value) }
        return parseWithJansson(buffer: buffer)
    }

    /// jansson alone, without the fast reader (what `parse` falls back to; tests compare the two).
    func parseWithJansson(_ bytes: [UInt8]) -> Result<JSONValue, JSONParseError> {
        bytes.withUnsafeBytes { parseWithJansson(buffer: $0) }
    }

    private func parseWithJansson(buffer: UnsafeRawBufferPointer) -> Result<JSONValue, JSONParseError> {
        var error = json_error_t()
        let flags = Int(JSON_DECODE_ANY | JSON_ALLOW_NUL)
        let empty: [CChar] = [0]
        let root = empty.withUnsafeBufferPointer { fallback in
            json_loadb(buffer.baseAddress?.assumingMemoryBound(to: CChar.self) ?? fallback.baseAddress, buffer.count, flags, &error)
        }
        guard let root else {
            return .failure(JSONParseError(jansson: error))
        }
        defer { json_decref(root) }
        // jansson accepts a bare number followed by NUL ("123\0"); RFC 8259 does not.
        if buffer.contains(0), [JSON_INTEGER, JSON_REAL].contains(json_type(UInt32(cjansson_typeof(root)))) {
            let at = buffer.firstIndex(of: 0) ?? 0
            return .failure(JSONParseError(message: "unexpected NUL byte", line: 1, column: at + 1, byteOffset: at))
        }
        return Self.convert(root, depth: 0, maximumDepth: maximumDepth)
    }

    private static func convert(_ node: UnsafeMutablePointer<json_t>, depth: Int, maximumDepth: Int) -> Result<JSONValue, JSONParseError> {
        switch json_type(UInt32(cjansson_typeof(node))) {
        case JSON_NULL: return .success(.null)
        case JSON_TRUE: return .success(.bool(true))
        case JSON_FALSE: return .success(.bool(false))
        case JSON_INTEGER: return .success(.integer(Int64(json_integer_value(node))))
        case JSON_REAL: return .success(.double(json_real_value(node)))
        case JSON_STRING:
            return .success(.string(Self.string(json_string_value(node), length: json_string_length(node))))
        case JSON_ARRAY:
            guard depth < maximumDepth else { return .failure(.tooDeep(maximumDepth)) }
            let count = json_array_size(node)
            var items: [JSONValue] = []
            items.reserveCapacity(count)
            for i in 0..<count {
                guard let child = json_array_get(node, i) else { continue }
                switch convert(child, depth: depth + 1, maximumDepth: maximumDepth) {
                case .success(let v): items.append(v)
                case .failure(let e): return .failure(e)
                }
            }
            return .success(.array(items))
        case JSON_OBJECT:
            guard depth < maximumDepth else { return .failure(.tooDeep(maximumDepth)) }
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(json_object_size(node))
            var iterator = json_object_iter(node)
            while let it = iterator {
                let key = Self.string(json_object_iter_key(it), length: json_object_iter_key_len(it))
                if let child = json_object_iter_value(it) {
                    switch convert(child, depth: depth + 1, maximumDepth: maximumDepth) {
                    case .success(let v): members[key] = v
                    case .failure(let e): return .failure(e)
                    }
                }
                iterator = json_object_iter_next(node, it)
            }
            return .success(.object(members))
        default:
            return .failure(JSONParseError(message: "unknown jansson value type", line: 0, column: 0, byteOffset: 0))
        }
    }

    private static func string(_ pointer: UnsafePointer<CChar>?, length: Int) -> String {
        guard let pointer else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            // jansson has already validated the UTF-8.
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}

extension JSONParseError {
    init(jansson error: json_error_t) {
        var error = error
        let text = withUnsafePointer(to: &error.text) {
            $0.withMemoryRebound(to: CChar.self, capacity: Int(JSON_ERROR_TEXT_LENGTH)) { String(cString: $0) }
        }
        self.init(message: text, line: Int(error.line), column: Int(error.column), byteOffset: Int(error.position))
    }

    static func tooDeep(_ limit: Int) -> JSONParseError {
        JSONParseError(message: "nesting deeper than \(limit) levels", line: 0, column: 0, byteOffset: 0)
    }
}
