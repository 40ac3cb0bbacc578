/// Wraps a serialized JSON body for the wire in the framing a peer spoke first: a
/// `Content-Length` header (the default) or a trailing newline in line mode.
public struct FrameWriter: Sendable {
    public var lineDelimited: Bool

    public init(lineDelimited: Bool = false) {
        self.lineDelimited = lineDelimited
    }

    /// The framed bytes. jansson escapes control characters inside strings, so a compact body
    /// never holds a raw newline and line mode stays unambiguous.
    public func frame(_ body: [UInt8]) -> [UInt8] {
        if lineDelimited { return body + [10] }
        var bytes = Array("Content-Length: \(body.count)\r\n\r\n".utf8)
        bytes.reserveCapacity(bytes.count + body.count)
        bytes.append(contentsOf: body)
        return bytes
    }
}
