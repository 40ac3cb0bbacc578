/// A collaboratively edited text: a `ReplicatingArray` of Unicode scalars in which the line break
/// `\n` is an ordinary element, stored and indexed per paragraph (line).
///
/// Guarantees: (line, character) <-> offset lookups cost O(log n) plus the length of that one
/// line, in UTF-8, UTF-16 or UTF-32 units; an edit touches one paragraph's storage and the index
/// path to it; remote operations report their changes per paragraph as editor-ready
/// `TextChange`s. `\r` is an ordinary character, so CRLF text round-trips unchanged. A text with
/// a final `\n` has a last, empty line.
public struct ReplicatingText {
    public private(set) var scalars: ReplicatingArray<Unicode.Scalar>

    @Sendable public static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool { scalar == "\n" }

    public init(replica: ReplicaID) {
        scalars = ReplicatingArray(replica: replica, paragraphBreak: Self.isLineBreak)
    }

    /// A text holding `text`, inserted by `replica`.
    public init(_ text: String, replica: ReplicaID) {
        self.init(replica: replica)
        scalars.insert(contentsOf: Array(text.unicodeScalars), at: 0)
    }

    init(scalars: ReplicatingArray<Unicode.Scalar>) {
        self.scalars = scalars
    }

    /// The replica that makes this copy's local edits.
    public var replica: ReplicaID {
        get { scalars.replica }
        set { scalars.replica = newValue }
    }

    // MARK: Reading

    /// Number of Unicode scalars. - Complexity: O(1)
    public var count: Int { scalars.count }

    /// Number of lines (one more than the number of line breaks). - Complexity: O(1)
    public var lineCount: Int { scalars.paragraphCount }

    /// The whole text. Encoded as UTF-8 straight into the string's storage, leaf by leaf (no
    /// array of scalars, no scalar-by-scalar append). - Complexity: O(n)
    public var string: String {
        let count = utf8Count
        guard count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count) { buffer in
            writeUTF8(into: buffer)
        }
    }

    /// The length of the text in UTF-8. - Complexity: O(n), a pass over the scalars
    public var utf8Count: Int {
        var total = 0
        forEachContentChunk(latin1: { bytes in
            total &+= bytes.count
            for byte in bytes { total &+= Int(byte >> 7) }
        }) { chunk in
            for scalar in chunk { total &+= UTF8.width(scalar) }
        }
        return total
    }

    /// Writes the text as UTF-8 into `buffer`, which holds at least `utf8Count` bytes; returns
    /// how many it wrote. - Complexity: O(n)
    public func writeUTF8(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var i = 0
        forEachContentChunk(latin1: { bytes in
            for byte in bytes {
                if byte < 0x80 {
                    buffer[i] = byte
                    i &+= 1
                } else {
                    buffer[i] = 0xC0 | (byte >> 6)
                    buffer[i + 1] = 0x80 | (byte & 0x3F)
                    i &+= 2
                }
            }
        }) { chunk in
            for scalar in chunk {
                let value = scalar.value
                switch value {
                case 0..<0x80:
                    buffer[i] = UInt8(truncatingIfNeeded: value)
                    i &+= 1
                case 0x80..<0x800:
                    buffer[i] = UInt8(truncatingIfNeeded: 0xC0 | (value >> 6))
                    buffer[i + 1] = UInt8(truncatingIfNeeded: 0x80 | (value & 0x3F))
                    i &+= 2
                case 0x800..<0x10000:
                    buffer[i] = UInt8(truncatingIfNeeded: 0xE0 | (value >> 12))
                    buffer[i + 1] = UInt8(truncatingIfNeeded: 0x80 | ((value >> 6) & 0x3F))
                    buffer[i + 2] = UInt8(truncatingIfNeeded: 0x80 | (value & 0x3F))
                    i &+= 3
                default:
                    buffer[i] = UInt8(truncatingIfNeeded: 0xF0 | (value >> 18))
                    buffer[i + 1] = UInt8(truncatingIfNeeded: 0x80 | ((value >> 12) & 0x3F))
                    buffer[i + 2] = UInt8(truncatingIfNeeded: 0x80 | ((value >> 6) & 0x3F))
                    buffer[i + 3] = UInt8(truncatingIfNeeded: 0x80 | (value & 0x3F))
                    i &+= 4
                }
            }
        }
        return i
    }

    /// Calls `latin1` with the visible scalars of each leaf stored one byte each (every scalar
    /// below U+0100, its value the byte), and `body` with those of the other leaves, in order.
    @inline(__always)
    private func forEachContentChunk(latin1: (UnsafeBufferPointer<UInt8>) -> Void, _ body: (UnsafeBufferPointer<Unicode.Scalar>) -> Void) {
        let storage = scalars.storage
        var leaf: Int? = ReplicatingArrayStorage<Unicode.Scalar>.firstLeaf
        while let l = leaf {
            let content = storage.leaves[l].content
            if content.width == 1 {
                _ = content.withUnsafeScalarBytes { bytes, _ in latin1(bytes) }
            } else {
                content.withUnsafeElements(body)
            }
            leaf = storage.leaf(after: l)
        }
    }

    /// The scalars of line `line`, without its line break. - Complexity: O(log n + line length)
    public func lineScalars(_ line: Int) -> [Unicode.Scalar] {
        scalars.elements(in: scalars.rangeOfParagraph(line))
    }

    public func line(_ line: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: lineScalars(line))
        return String(view)
    }

    /// The scalar offset of `position`, whose `character` counts in `encoding`.
    /// - Complexity: O(log n + line length)
    public func offset(of position: TextPosition, in encoding: PositionEncoding) throws(TextPositionError) -> Int {
        guard position.line >= 0, position.character >= 0 else { throw .negative(position) }
        guard position.line < lineCount else { throw .lineOutOfRange(line: position.line, lineCount: lineCount) }
        let range = scalars.rangeOfParagraph(position.line)
        if encoding == .utf32 {
            guard position.character <= range.count else {
                throw .characterOutOfRange(position, lineLength: range.count, encoding: encoding)
            }
            return range.lowerBound + position.character
        }
        var units = 0
        var index = range.lowerBound
        for scalar in scalars.elements(in: range) {
            if units == position.character { return index }
            units += encoding.width(of: scalar)
            if units > position.character { throw .insideCharacter(position, encoding: encoding) }
            index += 1
        }
        guard units == position.character else {
            throw .characterOutOfRange(position, lineLength: units, encoding: encoding)
        }
        return index
    }

    /// The position of scalar offset `offset` (0...count), with `character` in `encoding`.
    /// - Complexity: O(log n + line length)
    public func position(ofOffset offset: Int, in encoding: PositionEncoding) -> TextPosition {
        precondition(offset >= 0 && offset <= count, "offset out of range")
        return Self.position(ofOffset: offset, in: encoding, storage: scalars.storage)
    }

    static func position(ofOffset offset: Int, in encoding: PositionEncoding, storage: ReplicatingArrayStorage<Unicode.Scalar>) -> TextPosition {
        let line = storage.paragraph(containing: offset)
        let start = storage.startOfParagraph(line)
        if encoding == .utf32 { return TextPosition(line: line, character: offset - start) }
        return TextPosition(line: line, character: encoding.width(of: storage.elements(in: start..<offset)))
    }

    /// The scalar range of `range`, validated.
    public func offsets(of range: TextRange, in encoding: PositionEncoding) throws(TextPositionError) -> Range<Int> {
        let start = try offset(of: range.start, in: encoding)
        let end = try offset(of: range.end, in: encoding)
        guard start <= end else { throw .reversedRange(range) }
        return start..<end
    }

    // MARK: Local edits

    /// Replaces the scalars at `range` with `text`; returns the operations to ship.
    @discardableResult
    public mutating func replace(_ range: Range<Int>, with text: some Collection<Unicode.Scalar>) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        scalars.replaceSubrange(range, with: text)
    }

    /// Replaces `range` with `text` so that the new text stands where the old stood, even among
    /// others' concurrent insertions at either end (protocol/decisions/edit-intent.md, rule 6):
    /// when two or more characters go, the insertion hangs from the first of them (now removed),
    /// ahead of the rest, so what someone typed right before the old text (hanging from the
    /// character before it) stays before the new text, and what they typed right after it
    /// (hanging from its last character) stays after. One character, or a pure insertion or
    /// removal: as `replace`. Returns the removal, then the insertion.
    /// - Complexity: O(k + log n + size of one leaf)
    @discardableResult
    public mutating func replaceInPlace(_ range: Range<Int>, with text: [Unicode.Scalar]) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        guard range.count >= 2, !text.isEmpty else { return replace(range, with: text) }
        let first = scalars.id(at: range.lowerBound)
        var operations = replace(range, with: [])
        if let insertion = scalars.insert(contentsOf: text, after: first) {
            operations.append(insertion)
        } else {
            // Cannot happen (the element was just removed here, so it is known and not
            // compacted), but the new text is never lost: at the index, as `replace` would.
            operations += replace(range.lowerBound..<range.lowerBound, with: text)
        }
        return operations
    }

    /// Replaces `range` (positions in `encoding`) with `text`; validates before changing anything.
    @discardableResult
    public mutating func replace(_ range: TextRange, with text: String, in encoding: PositionEncoding) throws(TextPositionError) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        let offsets = try offsets(of: range, in: encoding)
        return replace(offsets, with: Array(text.unicodeScalars))
    }

    /// Inserts `text` right after the element `id` (visible or removed), where removed text
    /// stood; nil when there is nothing to insert or `id` is unknown. - Complexity: O(k + log n)
    @discardableResult
    public mutating func insert(_ text: [Unicode.Scalar], after id: ElementID) -> ReplicatingArrayOperation<Unicode.Scalar>? {
        scalars.insert(contentsOf: text, after: id)
    }

    /// Makes the text equal to `newText` with the minimal character-level edits against the
    /// current text (line diff first, then characters inside changed lines); returns them as
    /// operations, so concurrent edits elsewhere in the same lines still merge.
    @discardableResult
    public mutating func replaceAll(with newText: String) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        replaceLines(0..<lineCount, with: newText)
    }

    /// Replaces whole lines `lines` (their text, joined by `\n`, without the break after the
    /// last one) with `newText`, reduced to minimal edits inside that region.
    /// - Complexity: O(size of the region + diff)
    @discardableResult
    public mutating func replaceLines(_ lines: Range<Int>, with newText: String) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        precondition(lines.lowerBound >= 0 && lines.upperBound <= lineCount && !lines.isEmpty, "line range out of bounds")
        let start = scalars.startOfParagraph(lines.lowerBound)
        let end = scalars.rangeOfParagraph(lines.upperBound - 1).upperBound
        let old = scalars.elements(in: start..<end)
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for edit in TextDiff.edits(from: old, to: Array(newText.unicodeScalars)).reversed() {
            operations.append(contentsOf: replace((start + edit.range.lowerBound)..<(start + edit.range.upperBound), with: edit.replacement))
        }
        return operations
    }

    // MARK: Replication

    /// Applies an operation from another replica; returns the visible changes, in order, each
    /// with positions in `encoding` valid just before it (so an editor applies them one by one).
    @discardableResult
    public mutating func apply(_ operation: ReplicatingArrayOperation<Unicode.Scalar>, reportingIn encoding: PositionEncoding = .utf32) -> [TextChange] {
        var changes: [TextChange] = []
        scalars.makeUnique()
        // Positions are computed inside the callback, against the state right after each change.
        // The reference is unretained so that `apply` still sees its storage as uniquely owned.
        unowned(unsafe) let storage = scalars.storage
        scalars.apply(operation) { change in
            switch change {
            case .inserted(let at, let elements):
                let start = Self.position(ofOffset: at, in: encoding, storage: storage)
                changes.append(TextChange(range: TextRange(start: start, end: start), text: String(String.UnicodeScalarView(elements))))
            case .removed(let at, let elements):
                let start = Self.position(ofOffset: at, in: encoding, storage: storage)
                var end = start
                for scalar in elements {
                    if scalar == "\n" {
                        end = TextPosition(line: end.line + 1, character: 0)
                    } else {
                        end.character += encoding.width(of: scalar)
                    }
                }
                changes.append(TextChange(range: TextRange(start: start, end: end), text: ""))
            }
        }
        return changes
    }

    /// Applies an operation from another replica like `apply(_:reportingIn:)`, without working
    /// out the changes an editor would need. For loading, log replay and copies no editor shows.
    public mutating func integrate(_ operation: consuming ReplicatingArrayOperation<Unicode.Scalar>) {
        scalars.integrate(operation)
    }

    /// Drops the stored tombstones in `candidates` (nil: all) and not in `keep` (see
    /// `ReplicatingArray.dropTombstones`).
    @discardableResult
    public mutating func dropTombstones(in candidates: [ElementIDRange]? = nil, keeping keep: [ElementIDRange] = []) -> Int {
        scalars.dropTombstones(in: candidates, keeping: keep)
    }

    public var versionVector: VersionVector { scalars.versionVector }

    public func operations(since version: VersionVector = VersionVector()) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        scalars.operations(since: version)
    }

    /// The whole replicated state, compact and versioned.
    public func encodedState() -> [UInt8] { scalars.encodedState() }

    /// Decodes `encodedState()` bytes; see `ReplicatingArray.init(decodingState:...)` for the limits.
    public init(decodingState bytes: [UInt8], replica: ReplicaID, maximumElements: Int = ReplicatingArrayCoding.defaultMaximumElements,
                maximumReplicas: Int = ReplicatingArrayCoding.maxReplicas - 1, keepingWaitingOperations: Bool = false) throws(BinaryDecodingError) {
        scalars = try ReplicatingArray(decodingState: bytes, replica: replica, paragraphBreak: Self.isLineBreak,
                                       maximumElements: maximumElements, maximumReplicas: maximumReplicas,
                                       keepingWaitingOperations: keepingWaitingOperations)
    }
}

extension String.UnicodeScalarView {
    init(_ scalars: [Unicode.Scalar]) {
        self.init()
        append(contentsOf: scalars)
    }
}

extension ReplicatingText: Replicable {
    public func merged(with other: ReplicatingText) -> ReplicatingText {
        ReplicatingText(scalars: scalars.merged(with: other.scalars))
    }
}

extension ReplicatingText: Equatable {
    public static func == (lhs: ReplicatingText, rhs: ReplicatingText) -> Bool { lhs.scalars == rhs.scalars }
}

extension ReplicatingText: CustomStringConvertible {
    public var description: String { "ReplicatingText(\(string.debugDescription))" }
}

extension ReplicatingText: Codable {
    private enum CodingKeys: String, CodingKey { case formatVersion, replica, state }

    /// Encoded as the compact binary state (base64 in JSON), with the format version.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .formatVersion)
        guard version == ReplicatingTypesInfo.formatVersion else {
            throw DecodingError.dataCorruptedError(forKey: .formatVersion, in: container, debugDescription: "unsupported format version \(version)")
        }
        let replica = try container.decode(ReplicaID.self, forKey: .replica)
        let state = try container.decode([UInt8].self, forKey: .state)
        do {
            try self.init(decodingState: state, replica: replica)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .state, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ReplicatingTypesInfo.formatVersion, forKey: .formatVersion)
        try container.encode(replica, forKey: .replica)
        try container.encode(encodedState(), forKey: .state)
    }
}

extension ReplicatingText: @unchecked Sendable {}
