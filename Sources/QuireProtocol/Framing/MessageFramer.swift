/// Cuts a byte stream into JSON-RPC message bodies: LSP `Content-Length` frames, or, when the
/// first non-blank byte of the stream is `{` or `[`, one JSON text per line.
///
/// A small state machine fed with whatever a read returned (a byte at a time or many messages at
/// once). Guarantees:
/// 1. Header names are matched case-insensitively; `Content-Type` and unknown headers are
///    accepted and ignored; a header line may end in `\r\n` or `\n`.
/// 2. No body over `maximumFrameBytes` is ever buffered: its bytes are counted off and dropped,
///    and one `.frameTooLarge` error is reported for it.
/// 3. After a header error the framer resynchronizes at the next `Content-Length`, so one
///    bad frame never wedges the stream.
/// 4. In line mode, blank lines are skipped and a trailing `\r` is removed.
public struct MessageFramer: Sendable {
    public enum Mode: Sendable, Equatable { case undetermined, contentLength, lineDelimited }

    /// What one call to `feed` produced, in stream order.
    public enum Event: Sendable, Equatable {
        case message([UInt8])
        case error(FramingError)
    }

    public let maximumFrameBytes: Int
    public let maximumHeaderBytes: Int
    public private(set) var mode: Mode = .undetermined

    /// Bytes before `start` are consumed; they are dropped once per `feed`, not once per message,
    /// so a read holding many small messages costs O(bytes), not O(bytes x messages).
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for a header end or a line end resumes (an index into `buffer`).
    private var scan = 0
    private var state = State.header
    private enum State: Sendable {
        case header
        case body(length: Int)
        case skipping(remaining: Int)
        case resynchronizing
        case skippingLine
    }

    public init(maximumFrameBytes: Int = 8 << 20, maximumHeaderBytes: Int = 8 << 10) {
        self.maximumFrameBytes = maximumFrameBytes
        self.maximumHeaderBytes = maximumHeaderBytes
    }

    /// Bytes received but not yet part of a complete message.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds bytes from the stream; returns the complete messages and errors they finished.
    /// - Complexity: O(bytes fed), amortized.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        while step(into: &events) {}
        compact()
        return events
    }

    /// The stream ended: reports a frame left incomplete, if any.
    public mutating func finish() -> FramingError? {
        let count = bufferedByteCount
        let leftover = pending.contains { !Self.isBlank($0) }
        buffer.removeAll()
        start = 0
        scan = 0
        switch state {
        case .body, .skipping: return .truncatedFrame(bufferedBytes: count)
        case .header, .resynchronizing, .skippingLine: return leftover ? .truncatedFrame(bufferedBytes: count) : nil
        }
    }

    // MARK: The state machine

    /// The bytes not consumed yet (indices are `buffer`'s).
    private var pending: ArraySlice<UInt8> { buffer[start...] }

    private mutating func consume(_ count: Int) {
        start += count
        scan = start
    }

    private mutating func consume(upTo index: Int) { consume(index - start) }

    private mutating func compact() {
        guard start > 0 else { return }
        buffer.removeFirst(start)
        scan = max(0, scan - start)
        start = 0
    }

    /// Makes one step of progress; false when more bytes are needed.
    private mutating func step(into events: inout [Event]) -> Bool {
        if mode == .undetermined {
            guard let first = pending.firstIndex(where: { !Self.isBlank($0) }) else { consume(upTo: buffer.count); return false }
            mode = (buffer[first] == UInt8(ascii: "{") || buffer[first] == UInt8(ascii: "[")) ? .lineDelimited : .contentLength
        }
        switch state {
        case .skipping(let remaining):
            let n = min(remaining, bufferedByteCount)
            consume(n)
            state = remaining - n == 0 ? .header : .skipping(remaining: remaining - n)
            return remaining - n == 0
        case .body(let length):
            guard bufferedByteCount >= length else { return false }
            events.append(.message(Array(buffer[start..<(start + length)])))
            consume(length)
            state = .header
            return true
        case .skippingLine:
            guard let newline = pending.firstIndex(of: 10) else { consume(upTo: buffer.count); return false }
            consume(upTo: newline + 1)
            state = .header
            return true
        case .resynchronizing:
            return resynchronize()
        case .header:
            return mode == .lineDelimited ? nextLine(into: &events) : nextHeader(into: &events)
        }
    }

    private mutating func nextLine(into events: inout [Event]) -> Bool {
        guard let newline = buffer[max(scan, start)...].firstIndex(of: 10) else {
            scan = buffer.count
            if bufferedByteCount > maximumFrameBytes {
                events.append(.error(.frameTooLarge(size: nil, limit: maximumFrameBytes)))
                consume(upTo: buffer.count)
                state = .skippingLine
            }
            return false
        }
        var line = buffer[start..<newline]
        if line.last == 13 { line = line.dropLast() }
        if line.count > maximumFrameBytes {
            events.append(.error(.frameTooLarge(size: line.count, limit: maximumFrameBytes)))
        } else if line.contains(where: { !Self.isBlank($0) }) {
            events.append(.message(Array(line)))
        }
        consume(upTo: newline + 1)
        return true
    }

    private mutating func nextHeader(into events: inout [Event]) -> Bool {
        // Skip blank bytes between frames.
        guard let first = pending.firstIndex(where: { !Self.isBlank($0) }) else {
            consume(upTo: buffer.count)
            return false
        }
        if first > start { consume(upTo: first) }
        guard let end = headerEnd() else {
            if bufferedByteCount > maximumHeaderBytes {
                events.append(.error(.headerTooLong(limit: maximumHeaderBytes)))
                consume(1)
                state = .resynchronizing
                return true
            }
            return false
        }
        let header = Array(buffer[start..<end.header])
        consume(upTo: end.consumed)
        switch Self.contentLength(in: header) {
        case .success(let length) where length > maximumFrameBytes:
            events.append(.error(.frameTooLarge(size: length, limit: maximumFrameBytes)))
            state = .skipping(remaining: length)
        case .success(let length):
            state = .body(length: length)
        case .failure(let error):
            events.append(.error(error))
            state = .resynchronizing
        }
        return true
    }

    /// Finds the blank line that ends a header block, `\r\n\r\n` or `\n\n`: where the header ends
    /// and where its terminator does (indices into `buffer`).
    private mutating func headerEnd() -> (header: Int, consumed: Int)? {
        var i = max(scan, start)
        while i < buffer.count {
            if buffer[i] == 10 {
                if i + 1 < buffer.count, buffer[i + 1] == 10 { return (i, i + 2) }
                if i + 2 < buffer.count, buffer[i + 1] == 13, buffer[i + 2] == 10 { return (i, i + 3) }
            }
            i += 1
        }
        scan = max(start, buffer.count - 3)
        return nil
    }

    /// Drops bytes up to the next `Content-Length` (any case), wherever it starts: the body of
    /// a frame whose header was bad may run straight into the next header.
    private mutating func resynchronize() -> Bool {
        let needle = Array("content-length".utf8)
        var i = start
        while i + needle.count <= buffer.count {
            if Self.lowercased(buffer[i]) == needle[0],
               zip(buffer[i..<(i + needle.count)], needle).allSatisfy({ Self.lowercased($0) == $1 }) {
                consume(upTo: i)
                state = .header
                return true
            }
            i += 1
        }
        // Keep a tail that may be the start of the needle.
        consume(max(0, bufferedByteCount - (needle.count - 1)))
        return false
    }

    private static func contentLength(in header: [UInt8]) -> Result<Int, FramingError> {
        var length: Int?
        for rawLine in header.split(separator: 10, omittingEmptySubsequences: true) {
            var line = rawLine[...]
            if line.last == 13 { line = line.dropLast() }
            if line.isEmpty { continue }
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return .failure(.malformedHeader(text)) }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmingBlanks().lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingBlanks()
            guard !name.isEmpty else { return .failure(.malformedHeader(text)) }
            if name == "content-length" {
                guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), value.utf8.count <= 18, let n = Int(value) else {
                    return .failure(.invalidContentLength(value))
                }
                length = n
            }
        }
        guard let length else { return .failure(.missingContentLength) }
        return .success(length)
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 10 || byte == 13 }
    private static func lowercased(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
}

extension String {
    func trimmingBlanks() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
