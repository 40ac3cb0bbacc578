/// The binary form of `ReplicatingArray` operations (format version 1).
///
/// A batch is: version byte, replica table (count, IDs), operation count, operations. An insertion
/// is a tag byte (kind, anchor form, same-replica flag), the replica's table index unless it is
/// the previous insertion's, its counter as a delta from that replica's next expected counter, its
/// Lamport counter as a delta from the previous insertion's end, the anchor (often implied: the
/// previous element of the same replica), the run length and the content. A removal is a list of
/// (replica index, counter, count) ranges. A whole array's state is the batch of
/// `operations(since: [])`, so decoding a state re-derives its order and cannot smuggle in an
/// order the algorithm would not produce.
public enum ReplicatingArrayCoding {
    public static let maxOperations = 1 << 24
    static let maxRunLength = 1 << 26
    public static let maxReplicas = 1 << 16

    enum Kind: UInt8 { case insertElements = 0, insertRemoved = 1, remove = 2 }
    enum AnchorForm: UInt8 { case start = 0, previousOfSameReplica = 1, sameReplica = 2, otherReplica = 3 }

    public static func encode<Element: ReplicatingElementCodable>(_ operations: [ReplicatingArrayOperation<Element>]) -> [UInt8] {
        var replicas: [ReplicaID] = []
        var replicaIndex: [ReplicaID: Int] = [:]
        // The last replica looked up: an operation's replica is usually the previous one's.
        var last = (replica: ReplicaID(0), index: -1)
        func index(_ r: ReplicaID) -> Int {
            if last.index >= 0, last.replica == r { return last.index }
            if let i = replicaIndex[r] {
                last = (r, i)
                return i
            }
            replicaIndex[r] = replicas.count
            replicas.append(r)
            last = (r, replicas.count - 1)
            return replicas.count - 1
        }
        var contentCount = 0
        for op in operations {
            switch op {
            case .insert(let ins):
                _ = index(ins.id.replica)
                if let a = ins.anchor { _ = index(a.replica) }
                if case .elements(let elements) = ins.content { contentCount &+= elements.count }
            case .remove(let ranges):
                for r in ranges { _ = index(r.start.replica) }
            }
        }
        var w = BinaryWriter()
        w.reserveCapacity(16 + 10 * replicas.count + 8 * operations.count + contentCount)
        w.write(UInt8(ReplicatingTypesInfo.formatVersion))
        w.writeVarint(UInt64(replicas.count))
        for r in replicas { w.writeVarint(r.rawValue) }
        w.writeVarint(UInt64(operations.count))
        var nextCounter = [UInt64](repeating: 0, count: replicas.count)
        var previousReplica = -1
        var previousLamportEnd: UInt64 = 0
        for op in operations {
            switch op {
            case .insert(let ins):
                let r = index(ins.id.replica)
                var tag: UInt8
                switch ins.content {
                case .elements: tag = Kind.insertElements.rawValue
                case .removed: tag = Kind.insertRemoved.rawValue
                }
                let form: AnchorForm
                if let a = ins.anchor {
                    if a.replica != ins.id.replica { form = .otherReplica }
                    else if a.counter &+ 1 == ins.id.counter { form = .previousOfSameReplica }
                    else { form = .sameReplica }
                } else {
                    form = .start
                }
                tag |= form.rawValue << 2
                if r == previousReplica { tag |= 1 << 4 }
                w.write(tag)
                if r != previousReplica { w.writeVarint(UInt64(r)) }
                w.writeSignedVarint(Int64(bitPattern: ins.id.counter &- nextCounter[r]))
                w.writeSignedVarint(Int64(bitPattern: ins.lamport &- previousLamportEnd))
                switch form {
                case .start, .previousOfSameReplica: break
                case .sameReplica: w.writeSignedVarint(Int64(bitPattern: (ins.anchor?.counter ?? 0) &- ins.id.counter))
                case .otherReplica:
                    w.writeVarint(UInt64(index(ins.anchor?.replica ?? ins.id.replica)))
                    w.writeVarint(ins.anchor?.counter ?? 0)
                }
                w.writeVarint(UInt64(ins.count))
                if case .elements(let elements) = ins.content {
                    if Element.self == Unicode.Scalar.self {
                        // Straight from the operation's memory, as `Unicode.Scalar.encode` writes it.
                        elements.withContiguousElements { buffer in
                            w.writeUTF8(UnsafeBufferPointer(start: UnsafeRawPointer(buffer.baseAddress)?.assumingMemoryBound(to: Unicode.Scalar.self), count: buffer.count))
                        }
                    } else {
                        Element.encode(Array(elements), into: &w)
                    }
                }
                nextCounter[r] = ins.id.counter &+ UInt64(ins.count)
                previousReplica = r
                previousLamportEnd = ins.lamport &+ UInt64(ins.count)
            case .remove(let ranges):
                w.write(Kind.remove.rawValue)
                w.writeVarint(UInt64(ranges.count))
                for range in ranges {
                    w.writeVarint(UInt64(index(range.start.replica)))
                    w.writeVarint(range.start.counter)
                    w.writeVarint(range.count)
                }
            }
        }
        return w.bytes
    }

    /// Most elements a decoded state may hold unless the caller says otherwise (4 bytes of index
    /// each, tombstones and compacted elements included).
    public static let defaultMaximumElements = 1 << 26

    /// Decodes a batch. Every count is checked against the bytes left before anything is
    /// reserved for it; `maximumOperations` bounds the batch before its operations are built.
    /// Claimed run lengths of removed elements are not allocated here (see `growth(from:)`).
    public static func decode<Element: ReplicatingElementCodable>(_ bytes: [UInt8], as: Element.Type = Element.self,
                                                                 maximumOperations: Int = maxOperations) throws(BinaryDecodingError) -> [ReplicatingArrayOperation<Element>] {
        var r = BinaryReader(bytes)
        let version = try r.readByte()
        guard version == UInt8(ReplicatingTypesInfo.formatVersion) else { throw .unsupportedVersion(version) }
        let replicaCount = try r.readCount(limit: Swift.min(maxReplicas, r.remaining))
        var replicas: [ReplicaID] = []
        for _ in 0..<replicaCount { replicas.append(ReplicaID(try r.readVarint())) }
        func replica(_ i: Int) throws(BinaryDecodingError) -> ReplicaID {
            guard i >= 0, i < replicas.count else { throw .invalid("replica index \(i) outside the table of \(replicas.count)") }
            return replicas[i]
        }
        // An operation takes at least two bytes (a removal: tag and range count).
        let count = try r.readCount(limit: Swift.min(maximumOperations, maxOperations, r.remaining / 2))
        var operations: [ReplicatingArrayOperation<Element>] = []
        operations.reserveCapacity(count)
        var nextCounter = [UInt64](repeating: 0, count: replicas.count)
        var previousReplica = -1
        var previousLamportEnd: UInt64 = 0
        for _ in 0..<count {
            let tag = try r.readByte()
            guard let kind = Kind(rawValue: tag & 0b11) else { throw .invalid("unknown operation kind \(tag & 0b11)") }
            switch kind {
            case .insertElements, .insertRemoved:
                guard tag >> 5 == 0, let form = AnchorForm(rawValue: (tag >> 2) & 0b11) else { throw .invalid("unknown flags in tag \(tag)") }
                let rIndex = tag & (1 << 4) != 0 ? previousReplica : try r.readCount(limit: replicas.count)
                let id = try replica(rIndex)
                let counter = nextCounter[rIndex] &+ UInt64(bitPattern: try r.readSignedVarint())
                let lamport = previousLamportEnd &+ UInt64(bitPattern: try r.readSignedVarint())
                let anchor: ElementID?
                switch form {
                case .start: anchor = nil
                case .previousOfSameReplica:
                    guard counter > 0 else { throw .invalid("run at counter 0 cannot follow an earlier element of its replica") }
                    anchor = ElementID(replica: id, counter: counter - 1)
                case .sameReplica: anchor = ElementID(replica: id, counter: counter &+ UInt64(bitPattern: try r.readSignedVarint()))
                case .otherReplica: anchor = ElementID(replica: try replica(try r.readCount(limit: replicas.count)), counter: try r.readVarint())
                }
                let length = try r.readCount(limit: maxRunLength)
                guard length > 0 else { throw .invalid("empty run") }
                guard counter <= UInt64.max - UInt64(length), lamport <= UInt64.max - UInt64(length) else { throw .invalid("counter overflow") }
                let content: ReplicatingArrayInsertion<Element>.Content =
                    kind == .insertElements ? .elements(InsertedElements(try Element.decode(count: length, from: &r))) : .removed(count: length)
                operations.append(.insert(ReplicatingArrayInsertion(id: ElementID(replica: id, counter: counter), lamport: lamport, anchor: anchor, content: content)))
                nextCounter[rIndex] = counter + UInt64(length)
                previousReplica = rIndex
                previousLamportEnd = lamport + UInt64(length)
            case .remove:
                // A range takes at least three bytes (replica index, start, length).
                let n = try r.readCount(limit: r.remaining / 3)
                var ranges = ElementIDRanges()
                for _ in 0..<n {
                    let id = try replica(try r.readCount(limit: replicas.count))
                    let start = try r.readVarint()
                    let length = try r.readVarint()
                    guard start <= UInt64.max - length else { throw .invalid("removal range overflows") }
                    ranges.append(ElementIDRange(start: ElementID(replica: id, counter: start), count: length))
                }
                operations.append(.remove(ranges))
            }
        }
        guard r.isAtEnd else { throw .invalid("\(r.remaining) unexpected bytes after the last operation") }
        return operations
    }
}

extension ReplicatingArray where Element: ReplicatingElementCodable {
    /// The whole replicated state in the compact binary form: format 1 (the operations that
    /// rebuild it), or, once tombstones were compacted away, the document-order format 2, or
    /// format 3 (format 2 followed by the operations still waiting) when some operations wait.
    public func encodedState() -> [UInt8] {
        storage.compactedCount > 0 ? ReplicatingArrayOrderedState.encode(self) : ReplicatingArrayCoding.encode(operations())
    }

    /// Rebuilds an array from `encodedState()` bytes, edited locally as `replica`. Throws, leaving
    /// nothing half-built, on malformed bytes or a state that refers to elements it lacks.
    /// A state that would hold more than `maximumElements` elements (tombstones and compacted
    /// elements included) or more than `maximumReplicas` replicas is refused before it is built.
    /// `keepingWaitingOperations`: a state this copy wrote itself may hold operations waiting for
    /// the element they follow (it arrived out of order and was still on its way); they are kept
    /// waiting, as they were. A state from elsewhere must hold every element it refers to.
    public init(decodingState bytes: [UInt8], replica: ReplicaID, paragraphBreak: ((Element) -> Bool)? = nil,
                maximumElements: Int = ReplicatingArrayCoding.defaultMaximumElements,
                maximumReplicas: Int = ReplicatingArrayCoding.maxReplicas - 1,
                keepingWaitingOperations: Bool = false) throws(BinaryDecodingError) {
        let operations: [ReplicatingArrayOperation<Element>]
        if ReplicatingArrayOrderedState.isOrdered(bytes) {
            let decoded = try ReplicatingArrayOrderedState.decode(bytes, replica: replica, paragraphBreak: paragraphBreak,
                                                                  maximumElements: maximumElements, maximumReplicas: maximumReplicas)
            self = decoded.array
            operations = decoded.waiting
        } else {
            operations = try ReplicatingArrayCoding.decode(bytes, as: Element.self)
            self.init(replica: replica, paragraphBreak: paragraphBreak)
        }
        // Format 1: the whole state; formats 2 and 3: the operations waiting (none for format 2).
        guard !operations.isEmpty else { return }
        let growth = self.growth(from: operations)
        guard growth.totalElements <= UInt64(Swift.max(0, maximumElements)) else {
            throw .invalid("state claims \(growth.totalElements) elements, more than the limit of \(maximumElements)")
        }
        guard growth.totalReplicas <= maximumReplicas else {
            throw .invalid("state names \(growth.totalReplicas) replicas, more than the limit of \(maximumReplicas)")
        }
        apply(contentsOf: operations)
        guard rejectedOperationCount == 0 else { throw .invalid("state holds \(rejectedOperationCount) contradictory insertions") }
        guard pendingOperationCount == 0 || keepingWaitingOperations else {
            throw .invalid("state refers to \(pendingOperationCount) elements it does not contain")
        }
    }
}

extension ReplicatingArray: Codable where Element: Codable {
    private enum CodingKeys: String, CodingKey { case formatVersion, replica, operations }

    /// Decodes the state written by `encode(to:)`. The paragraph-break predicate is not data: a
    /// decoded array has none (use `ReplicatingText` for text).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .formatVersion)
        guard version == ReplicatingTypesInfo.formatVersion else {
            throw DecodingError.dataCorruptedError(forKey: .formatVersion, in: container, debugDescription: "unsupported format version \(version)")
        }
        self.init(replica: try container.decode(ReplicaID.self, forKey: .replica))
        apply(contentsOf: try container.decode([ReplicatingArrayOperation<Element>].self, forKey: .operations))
        guard pendingOperationCount == 0, rejectedOperationCount == 0 else {
            throw DecodingError.dataCorruptedError(forKey: .operations, in: container, debugDescription: "operations refer to elements they do not contain")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        guard compactedCount == 0 else {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "an array that compacted tombstones away travels only as encodedState()"))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ReplicatingTypesInfo.formatVersion, forKey: .formatVersion)
        try container.encode(replica, forKey: .replica)
        try container.encode(operations(), forKey: .operations)
    }
}
