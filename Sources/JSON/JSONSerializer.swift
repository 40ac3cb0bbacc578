import CJansson

/// Serializes a `JSONValue` through jansson (`json_dumpb`) as compact UTF-8.
///
/// Guarantees: the output parses back to an equal value (non-finite doubles, which JSON cannot
/// express, are written as `null`); with `sortedKeys` the bytes are deterministic.
public struct JSONSerializer: Sendable {
    public var sortedKeys: Bool

    public init(sortedKeys: Bool = false) {
        self.sortedKeys = sortedKeys
    }

    public func serialize(_ value: JSONValue) -> [UInt8] {
        guard let node = Self.makeNode(value) else { return Array("null".utf8) }
        defer { json_decref(node) }
        var flags = Int(JSON_COMPACT | JSON_ENCODE_ANY) | cjansson_real_precision(17)
        if sortedKeys { flags |= Int(JSON_SORT_KEYS) }
        let size = json_dumpb(node, nil, 0, flags)
        guard size > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: size) { json_dumpb(node, $0, size, flags) }
            } ?? 0
        }
    }

    public func string(_ value: JSONValue) -> String {
        String(decoding: serialize(value), as: UTF8.self)
    }

    private static func makeNode(_ value: JSONValue) -> UnsafeMutablePointer<json_t>? {
        switch value {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .integer(let i): return json_integer(json_int_t(i))
        case .double(let d): return d.isFinite ? json_real(d) : json_null()
        case .string(let s):
            // The C string's buffer holds all UTF-8 bytes, embedded NULs included.
            return s.withCString { json_stringn_nocheck($0, s.utf8.count) }
        case .array(let items):
            let array = json_array()
            for item in items {
                if let child = makeNode(item) { json_array_append_new(array, child) }
            }
            return array
        case .object(let members):
            let object = json_object()
            for (key, member) in members {
                guard let child = makeNode(member) else { continue }
                _ = key.withCString { json_object_setn_new_nocheck(object, $0, key.utf8.count, child) }
            }
            return object
        }
    }
}
