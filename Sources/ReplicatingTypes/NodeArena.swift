/// The nodes of one `ReplicatingArrayStorage` (its leaves, its branches or its ID index's
/// columns), by number: a growable buffer that exactly one storage owns and frees.
///
/// Unlike an array, reading or changing a node in place checks no uniqueness and counts no
/// references: a storage is copied node by node (`copy()`), never by sharing this buffer, so
/// there is nothing to check. Numbers are bounds-checked. An address obtained from the subscript
/// is valid only for the one access that obtained it; `append` may move the nodes.
struct NodeArena<Node> {
    private var base: UnsafeMutablePointer<Node>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 4) {
        self.capacity = Swift.max(capacity, 1)
        base = UnsafeMutablePointer<Node>.allocate(capacity: self.capacity)
    }

    var indices: Range<Int> { 0..<count }

    subscript(number: Int) -> Node {
        @inline(__always) unsafeAddress {
            precondition(number >= 0 && number < count, "node number out of range")
            return UnsafePointer(base + number)
        }
        @inline(__always) nonmutating unsafeMutableAddress {
            precondition(number >= 0 && number < count, "node number out of range")
            return base + number
        }
    }

    /// The address of node `number`, for a walk that reads or changes several fields of each node
    /// it passes; valid until the next `append`.
    @inline(__always)
    func address(of number: Int) -> UnsafeMutablePointer<Node> {
        precondition(number >= 0 && number < count, "node number out of range")
        return base + number
    }

    mutating func append(_ node: Node) {
        if count == capacity {
            let grown = UnsafeMutablePointer<Node>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: node)
        count += 1
    }

    /// Puts `node` under a number from `free` (the numbers of nodes let go, reused last first),
    /// or under a new one; returns the number.
    mutating func place(_ node: Node, reusing free: inout [Int32]) -> Int {
        if let number = free.popLast() {
            self[Int(number)] = node
            return Int(number)
        }
        append(node)
        return count - 1
    }

    /// Gives back the room beyond the nodes there are (a storage built whole, `fillFresh`,
    /// would otherwise keep up to half its leaves' room unused). Moves the nodes.
    mutating func shrinkToFit() {
        guard capacity > Swift.max(count, 1) else { return }
        let fitted = UnsafeMutablePointer<Node>.allocate(capacity: Swift.max(count, 1))
        fitted.moveInitialize(from: base, count: count)
        base.deallocate()
        base = fitted
        capacity = Swift.max(count, 1)
    }

    /// Frees the nodes; the owner calls this once, from its `deinit`.
    func deallocate() {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Bytes reserved for nodes, for statistics.
    var reservedBytes: Int { capacity * MemoryLayout<Node>.stride }
}
