/// Why bytes on a stream could not be cut into a message. The framer reports the error, skips
/// the offending frame (without buffering its body) and carries on with the next one.
public enum FramingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A header block without a `Content-Length` field.
    case missingContentLength
    /// A `Content-Length` that is not a non-negative decimal integer.
    case invalidContentLength(String)
    /// A header line that is not `Name: value`.
    case malformedHeader(String)
    /// A header block longer than the limit (no blank line seen in time).
    case headerTooLong(limit: Int)
    /// A frame body (or a line, in line mode) over the size limit; it is skipped, never buffered.
    case frameTooLarge(size: Int?, limit: Int)
    /// The stream ended inside a frame.
    case truncatedFrame(bufferedBytes: Int)

    public var description: String {
        switch self {
        case .missingContentLength: return "frame header has no Content-Length"
        case .invalidContentLength(let v): return "Content-Length \(v.debugDescription) is not a non-negative integer"
        case .malformedHeader(let line): return "malformed header line \(line.debugDescription)"
        case .headerTooLong(let limit): return "frame header longer than \(limit) bytes"
        case .frameTooLarge(let size, let limit):
            return "frame of \(size.map { "\($0) bytes" } ?? "more bytes") exceeds the limit of \(limit) bytes; skipped"
        case .truncatedFrame(let n): return "stream ended inside a frame (\(n) bytes buffered)"
        }
    }
}
