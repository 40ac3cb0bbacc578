/// Appends LEB128 varints and raw bytes: the compact binary form of operations and states.
public struct BinaryWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    @inline(__always)
    public mutating func write(_ byte: UInt8) { bytes.append(byte) }

    @inline(__always)
    public mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A signed value, zigzag-encoded so small magnitudes of either sign stay short.
    @inline(__always)
    public mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func write<C: Collection>(contentsOf raw: C) where C.Element == UInt8 {
        bytes.append(contentsOf: raw)
    }

    mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(count) }

    /// What `Unicode.Scalar.encode` writes for `scalars` (their UTF-8 byte length, then the
    /// bytes), from a buffer: no array made for them or for their bytes.
    mutating func writeUTF8(_ scalars: UnsafeBufferPointer<Unicode.Scalar>) {
        var length = 0
        for scalar in scalars {
            let v = scalar.value
            length &+= v < 0x80 ? 1 : v < 0x800 ? 2 : v < 0x1_0000 ? 3 : 4
        }
        writeVarint(UInt64(length))
        if length == scalars.count {
            for scalar in scalars { bytes.append(UInt8(truncatingIfNeeded: scalar.value)) }
            return
        }
        bytes.reserveCapacity(bytes.count + length)
        for scalar in scalars { UTF8.encode(scalar) { bytes.append($0) } }
    }
}

/// Why bytes could not be decoded; decoding never traps on malformed input.
public enum BinaryDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case varintTooLong
    case unsupportedVersion(UInt8)
    case invalid(String)

    public var description: String {
        switch self {
        case .truncated: return "input ends in the middle of a value"
        case .varintTooLong: return "a number is longer than 64 bits"
        case .unsupportedVersion(let v): return "format version \(v) is not supported (this build reads version \(ReplicatingTypesInfo.formatVersion))"
        case .invalid(let why): return why
        }
    }
}

/// Reads what `BinaryWriter` wrote, checking every bound.
public struct BinaryReader {
    private let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var isAtEnd: Bool { offset == bytes.count }
    public var remaining: Int { bytes.count - offset }

    public mutating func readByte() throws(BinaryDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readVarint() throws(BinaryDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64, shift < 63 || byte <= 1 else { throw .varintTooLong }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    public mutating func readSignedVarint() throws(BinaryDecodingError) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A varint that must fit `limit` (counts and indexes), so hostile input cannot ask for huge
    /// allocations.
    public mutating func readCount(limit: Int) throws(BinaryDecodingError) -> Int {
        let value = try readVarint()
        guard value <= UInt64(limit) else { throw .invalid("a count of \(value) exceeds the limit of \(limit)") }
        return Int(value)
    }

    public mutating func readBytes(_ count: Int) throws(BinaryDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw .truncated }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }
}

/// An element type that `ReplicatingArray` can encode compactly, a whole run at a time.
public protocol ReplicatingElementCodable {
    static func encode(_ elements: [Self], into writer: inout BinaryWriter)
    static func decode(count: Int, from reader: inout BinaryReader) throws(BinaryDecodingError) -> [Self]
}

extension Unicode.Scalar: ReplicatingElementCodable {
    /// A run of scalars as its UTF-8 byte length, then the UTF-8 bytes.
    public static func encode(_ elements: [Unicode.Scalar], into writer: inout BinaryWriter) {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(elements.count)
        for scalar in elements { UTF8.encode(scalar) { utf8.append($0) } }
        writer.writeVarint(UInt64(utf8.count))
        writer.write(contentsOf: utf8)
    }

    public static func decode(count: Int, from reader: inout BinaryReader) throws(BinaryDecodingError) -> [Unicode.Scalar] {
        let length = try reader.readCount(limit: Swift.min(reader.remaining, count.multipliedReportingOverflow(by: 4).partialValue))
        // Every scalar takes at least one byte: a count the bytes cannot hold is a lie, refused
        // before anything is reserved for it.
        guard count >= 0, count <= length else { throw .invalid("run claims \(count) scalars in \(length) bytes") }
        let bytes = try reader.readBytes(length)
        // ASCII (most code and prose): one scalar per byte, as the decoder below would give.
        if length == count, bytes.allSatisfy({ $0 < 0x80 }) {
            return bytes.map { Unicode.Scalar($0) }
        }
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(count)
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let s): scalars.append(s)
            case .emptyInput: break loop
            case .error: throw .invalid("invalid UTF-8 in element content")
            }
        }
        guard scalars.count == count else { throw .invalid("run holds \(scalars.count) scalars, expected \(count)") }
        return scalars
    }
}

extension UInt8: ReplicatingElementCodable {
    public static func encode(_ elements: [UInt8], into writer: inout BinaryWriter) {
        writer.write(contentsOf: elements)
    }

    public static func decode(count: Int, from reader: inout BinaryReader) throws(BinaryDecodingError) -> [UInt8] {
        Array(try reader.readBytes(count))
    }
}

extension Int: ReplicatingElementCodable {
    public static func encode(_ elements: [Int], into writer: inout BinaryWriter) {
        for e in elements { writer.writeSignedVarint(Int64(e)) }
    }

    public static func decode(count: Int, from reader: inout BinaryReader) throws(BinaryDecodingError) -> [Int] {
        guard count <= reader.remaining else { throw .truncated }
        var result: [Int] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(Int(try reader.readSignedVarint())) }
        return result
    }
}
