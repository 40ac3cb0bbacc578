/// Internal storage of a `ReplicatingArray`: runs of element records in leaves, a B+ tree of
/// visible counts over the leaves, and an index from element ID to leaf.
///
/// Model: the document order of every element ever inserted (tombstones included) is the order of
/// runs, leaf by leaf. A leaf holds its runs' records and, separately, the content of its visible
/// elements (tombstones keep no content). When a paragraph-break predicate is given, leaves follow
/// paragraphs: a visible break is always the last visible element of its leaf.
final class ReplicatingArrayStorage<Element> {
    /// Sentinel replica index meaning "no anchor: the start of the array".
    static var noReplica: UInt16 { .max }
    static var maxRunsPerLeaf: Int { 64 }
    static var maxContentPerLeaf: Int { 1024 }
    static var maxChildrenPerBranch: Int { 32 }

    /// One record: `length` consecutive elements of one replica, with consecutive counters and
    /// Lamport counters, each following the previous; all visible or all tombstones. 32 bytes.
    struct Run {
        var counter: UInt64
        var lamport: UInt64
        var anchorCounter: UInt64
        var replica: UInt16
        var anchorReplica: UInt16
        /// The length in the low 31 bits; the top bit marks tombstones.
        private var lengthAndFlag: UInt32

        init(counter: UInt64, lamport: UInt64, anchorCounter: UInt64, replica: UInt16, anchorReplica: UInt16, length: UInt32, isDeleted: Bool) {
            self.counter = counter
            self.lamport = lamport
            self.anchorCounter = anchorCounter
            self.replica = replica
            self.anchorReplica = anchorReplica
            self.lengthAndFlag = length | (isDeleted ? 0x8000_0000 : 0)
        }

        @inline(__always) var length: UInt32 {
            get { lengthAndFlag & 0x7FFF_FFFF }
            set { lengthAndFlag = (lengthAndFlag & 0x8000_0000) | newValue }
        }

        @inline(__always) var isDeleted: Bool {
            get { lengthAndFlag & 0x8000_0000 != 0 }
            set { lengthAndFlag = (lengthAndFlag & 0x7FFF_FFFF) | (newValue ? 0x8000_0000 : 0) }
        }

        var visibleLength: Int { isDeleted ? 0 : Int(length) }
        var end: UInt64 { counter + UInt64(length) }
    }

    /// Most distinct replicas one array records (replica indexes are 16 bits; one value is the
    /// "no anchor" sentinel).
    static var maxReplicas: Int { Int(UInt16.max) }
    static var maxRunLength: Int { 0x7FFF_FFFF }

    final class Leaf {
        var runs: ContiguousArray<Run> = []
        var content: ContiguousArray<Element> = []
        var breaks = 0
        unowned(unsafe) var parent: Branch
        unowned(unsafe) var next: Leaf?
        unowned(unsafe) var previous: Leaf?
        let number: UInt32

        init(number: UInt32, parent: Branch) {
            self.number = number
            self.parent = parent
        }

        /// The index of the run holding visible element `index` of this leaf, and its offset.
        /// - Complexity: O(runs in the leaf)
        @inline(__always)
        func runHolding(visible index: Int) -> (run: Int, offset: Int, contentStart: Int) {
            var remaining = index
            var contentStart = 0
            var r = 0
            while r < runs.count {
                let length = runs[r].visibleLength
                if remaining < length { return (r, remaining, contentStart) }
                remaining -= length
                contentStart += length
                r += 1
            }
            return (r, 0, contentStart)
        }

        /// The index of the run holding `counter` of replica `replica`, if this leaf has it.
        @inline(__always)
        func runHolding(replica: UInt16, counter: UInt64) -> Int? {
            for r in runs.indices where runs[r].replica == replica && runs[r].counter <= counter && counter < runs[r].end {
                return r
            }
            return nil
        }

        /// Number of visible elements in runs before `run`.
        @inline(__always)
        func contentStart(ofRun run: Int) -> Int {
            var total = 0
            for r in 0..<run { total += runs[r].visibleLength }
            return total
        }
    }

    final class Branch {
        var leaves: ContiguousArray<Leaf> = []
        var branches: ContiguousArray<Branch> = []
        let isBottom: Bool
        var visible = 0
        var breaks = 0
        unowned(unsafe) var parent: Branch?

        init(isBottom: Bool) {
            self.isBottom = isBottom
        }

        var childCount: Int { isBottom ? leaves.count : branches.count }
    }

    var root: Branch
    /// Every leaf ever made, by number; the ID index refers to leaves by number.
    var leafTable: ContiguousArray<Leaf> = []
    unowned(unsafe) var firstLeaf: Leaf
    /// Replica IDs by local index, and back.
    var replicas: ContiguousArray<ReplicaID> = []
    var replicaIndex: [ReplicaID: UInt16] = [:]
    /// For each replica index, the leaf number of each of its elements, by counter.
    var idIndex: ContiguousArray<LeafIndexColumn> = []
    var maxLamport: UInt64 = 0
    let isBreak: ((Element) -> Bool)?
    /// The leaf of the last local edit and the index of its first visible element. A count change
    /// in any other leaf clears it (splits move content after it, which keeps its start valid).
    unowned(unsafe) var cursorLeaf: Leaf?
    var cursorStart = 0
    /// Insertions waiting for an earlier insertion of their replica or for their anchor.
    var pendingInsertions: [ReplicatingArrayInsertion<Element>] = []
    /// Operations dropped because they could never be applied.
    var rejectedOperationCount = 0
    /// Removals of elements this copy does not have yet, by replica.
    var pendingRemovals: [ReplicaID: [Range<UInt64>]] = [:]

    init(isBreak: ((Element) -> Bool)?) {
        self.isBreak = isBreak
        let root = Branch(isBottom: true)
        let leaf = Leaf(number: 0, parent: root)
        root.leaves.append(leaf)
        self.root = root
        self.leafTable = [leaf]
        self.firstLeaf = leaf
    }

    var count: Int { root.visible }

    // MARK: Replicas

    /// The most recently interned replica, to skip hashing on the common path.
    private var lastInterned: (id: ReplicaID, index: UInt16)?

    @inline(__always)
    func index(of replica: ReplicaID) -> UInt16? {
        if let last = lastInterned, last.id == replica { return last.index }
        guard let index = replicaIndex[replica] else { return nil }
        lastInterned = (replica, index)
        return index
    }

    @inline(__always)
    func intern(_ replica: ReplicaID) -> UInt16 {
        if let index = index(of: replica) { return index }
        precondition(replicas.count < Self.maxReplicas, "more than \(Self.maxReplicas) replicas in one array")
        let index = UInt16(replicas.count)
        replicas.append(replica)
        replicaIndex[replica] = index
        idIndex.append(LeafIndexColumn())
        return index
    }

    /// Number of elements of `replica` this copy has (the next counter it expects).
    func known(_ replica: ReplicaID) -> UInt64 {
        guard let index = index(of: replica) else { return 0 }
        return UInt64(idIndex[Int(index)].count)
    }

    func contains(_ id: ElementID) -> Bool { id.counter < known(id.replica) }

    @inline(__always)
    func timestamp(of run: Run, offset: Int) -> LamportTimestamp {
        LamportTimestamp(counter: run.lamport + UInt64(offset), replica: replicas[Int(run.replica)])
    }

    func anchor(of run: Run) -> ElementID? {
        run.anchorReplica == Self.noReplica
            ? nil : ElementID(replica: replicas[Int(run.anchorReplica)], counter: run.anchorCounter)
    }

    // MARK: Finding

    /// The leaf holding visible element `index`, and the element's index within that leaf.
    /// - Complexity: O(log n)
    @inline(__always)
    func leaf(holding index: Int) -> (Leaf, Int) {
        var node = root
        var remaining = index
        while !node.isBottom {
            var i = 0
            let last = node.branches.count - 1
            while i < last, remaining >= node.branches[i].visible {
                remaining -= node.branches[i].visible
                i += 1
            }
            node = node.branches[i]
        }
        var i = 0
        let last = node.leaves.count - 1
        while i < last, remaining >= node.leaves[i].content.count {
            remaining -= node.leaves[i].content.count
            i += 1
        }
        return (node.leaves[i], remaining)
    }

    /// The leaf holding visible element `index`, through the cursor cache: consecutive local edits
    /// in one leaf (typing) skip the descent.
    /// - Complexity: O(1) on a cache hit, O(log n) otherwise
    @inline(__always)
    func leafForEdit(holding index: Int) -> (Leaf, Int) {
        if let leaf = cursorLeaf, index >= cursorStart, index - cursorStart < leaf.content.count {
            return (leaf, index - cursorStart)
        }
        let (leaf, i) = leaf(holding: index)
        cursorLeaf = leaf
        cursorStart = index - i
        return (leaf, i)
    }

    /// The leaf holding paragraph break number `index` (0-based).
    /// - Complexity: O(log n)
    func leaf(holdingBreak index: Int) -> (Leaf, Int) {
        var node = root
        var remaining = index
        while !node.isBottom {
            var i = 0
            let last = node.branches.count - 1
            while i < last, remaining >= node.branches[i].breaks {
                remaining -= node.branches[i].breaks
                i += 1
            }
            node = node.branches[i]
        }
        var i = 0
        let last = node.leaves.count - 1
        while i < last, remaining >= node.leaves[i].breaks {
            remaining -= node.leaves[i].breaks
            i += 1
        }
        return (node.leaves[i], remaining)
    }

    /// Visible elements and breaks before `leaf` in the whole array.
    /// - Complexity: O(log n)
    func start(of leaf: Leaf) -> (visible: Int, breaks: Int) {
        var visible = 0
        var breaks = 0
        var branch = leaf.parent
        for sibling in branch.leaves {
            if sibling === leaf { break }
            visible += sibling.content.count
            breaks += sibling.breaks
        }
        while let parent = branch.parent {
            for sibling in parent.branches {
                if sibling === branch { break }
                visible += sibling.visible
                breaks += sibling.breaks
            }
            branch = parent
        }
        return (visible, breaks)
    }

    /// The leaf, run and offset of an element by ID, if this copy has it.
    /// - Complexity: O(runs in one leaf)
    @inline(__always)
    func locate(replica: UInt16, counter: UInt64) -> (Leaf, Int, Int)? {
        guard counter < UInt64(idIndex[Int(replica)].count) else { return nil }
        let leaf = leafTable[Int(idIndex[Int(replica)][Int(counter)])]
        guard let run = leaf.runHolding(replica: replica, counter: counter) else { return nil }
        return (leaf, run, Int(counter - leaf.runs[run].counter))
    }

    // MARK: Counts

    @inline(__always)
    func adjustCounts(from leaf: Leaf, visible: Int, breaks: Int) {
        if leaf !== cursorLeaf { cursorLeaf = nil }
        var branch: Branch? = leaf.parent
        while let b = branch {
            b.visible += visible
            b.breaks += breaks
            branch = b.parent
        }
    }

    @inline(__always)
    func countBreaks<C: Collection>(in elements: C) -> Int where C.Element == Element {
        guard let isBreak else { return 0 }
        var n = 0
        for e in elements where isBreak(e) { n += 1 }
        return n
    }

    // MARK: Runs

    /// Splits run `run` of `leaf` so that a new run starts at `offset` (0 < offset < length).
    @inline(__always)
    func splitRun(_ leaf: Leaf, _ run: Int, at offset: Int) {
        let old = leaf.runs[run]
        var right = old
        right.counter = old.counter + UInt64(offset)
        right.lamport = old.lamport + UInt64(offset)
        right.anchorReplica = old.replica
        right.anchorCounter = right.counter - 1
        right.length = old.length - UInt32(offset)
        leaf.runs[run].length = UInt32(offset)
        leaf.runs.insert(right, at: run + 1)
    }

    /// True when `b` directly continues `a` (same replica, consecutive counters and Lamport
    /// counters, same visibility), so the two records can be one.
    @inline(__always)
    static func continues(_ a: Run, _ b: Run) -> Bool {
        a.replica == b.replica && a.end == b.counter && a.lamport + UInt64(a.length) == b.lamport
            && a.isDeleted == b.isDeleted
    }

    /// Joins run `run` with its neighbours in the same leaf where they continue each other.
    func coalesce(_ leaf: Leaf, around run: Int) {
        var r = run
        if r + 1 < leaf.runs.count, Self.continues(leaf.runs[r], leaf.runs[r + 1]) {
            leaf.runs[r].length += leaf.runs[r + 1].length
            leaf.runs.remove(at: r + 1)
        }
        if r > 0, Self.continues(leaf.runs[r - 1], leaf.runs[r]) {
            leaf.runs[r - 1].length += leaf.runs[r].length
            leaf.runs.remove(at: r)
            r -= 1
        }
    }

    // MARK: Leaves

    /// Restores the leaf rules after an insertion into `leaf`: a visible break ends its leaf, and
    /// no leaf grows past its capacity.
    func normalize(_ leaf: Leaf) {
        var current = leaf
        while true {
            if let isBreak, current.breaks > 1 || (current.breaks == 1 && !isBreak(current.content[current.content.count - 1])) {
                // Split right after the last visible break that does not end the leaf: the part
                // moved out is one paragraph, so splitting a long text costs O(n), not O(n^2).
                var index = current.content.count - 1
                if isBreak(current.content[index]) { index -= 1 }
                while !isBreak(current.content[index]) { index -= 1 }
                let (run, offset, _) = current.runHolding(visible: index)
                if offset + 1 < Int(current.runs[run].length) { splitRun(current, run, at: offset + 1) }
                normalize(split(current, at: run + 1))
                continue
            }
            if current.runs.count > Self.maxRunsPerLeaf || current.content.count > Self.maxContentPerLeaf {
                let run: Int
                if current.runs.count > Self.maxRunsPerLeaf {
                    run = current.runs.count / 2
                } else {
                    let (r, offset, _) = current.runHolding(visible: current.content.count / 2)
                    if offset > 0 { splitRun(current, r, at: offset) }
                    run = offset > 0 ? r + 1 : r
                }
                let right = split(current, at: Swift.max(run, 1))
                if right.runs.count > Self.maxRunsPerLeaf || right.content.count > Self.maxContentPerLeaf {
                    current = right
                    continue
                }
                if current.runs.count > Self.maxRunsPerLeaf || current.content.count > Self.maxContentPerLeaf { continue }
            }
            return
        }
    }

    /// Moves runs `run...` of `leaf` into a new leaf placed right after it; returns the new leaf.
    @discardableResult
    func split(_ leaf: Leaf, at run: Int) -> Leaf {
        let right = Leaf(number: UInt32(leafTable.count), parent: leaf.parent)
        leafTable.append(right)
        let contentStart = leaf.contentStart(ofRun: run)
        right.runs.append(contentsOf: leaf.runs[run...])
        leaf.runs.removeSubrange(run...)
        right.content.append(contentsOf: leaf.content[contentStart...])
        leaf.content.removeSubrange(contentStart...)
        Self.trimCapacity(&leaf.runs)
        Self.trimCapacity(&leaf.content)
        let movedBreaks = countBreaks(in: right.content)
        right.breaks = movedBreaks
        leaf.breaks -= movedBreaks
        for r in right.runs { idIndex[Int(r.replica)].assign(right.number, to: Int(r.counter)..<Int(r.end)) }
        right.next = leaf.next
        right.previous = leaf
        leaf.next?.previous = right
        leaf.next = right
        insert(right, after: leaf)
        return right
    }

    /// Places `leaf` in the tree right after `existing`, splitting branches that overflow.
    private func insert(_ leaf: Leaf, after existing: Leaf) {
        let parent = existing.parent
        let index = (parent.leaves.firstIndex { $0 === existing } ?? parent.leaves.count - 1) + 1
        parent.leaves.insert(leaf, at: index)
        leaf.parent = parent
        if parent.leaves.count > Self.maxChildrenPerBranch { splitBranch(parent) }
    }

    private func splitBranch(_ branch: Branch) {
        let right = Branch(isBottom: branch.isBottom)
        let half = branch.childCount / 2
        if branch.isBottom {
            right.leaves.append(contentsOf: branch.leaves[half...])
            branch.leaves.removeSubrange(half...)
            for leaf in right.leaves {
                leaf.parent = right
                right.visible += leaf.content.count
                right.breaks += leaf.breaks
            }
        } else {
            right.branches.append(contentsOf: branch.branches[half...])
            branch.branches.removeSubrange(half...)
            for child in right.branches {
                child.parent = right
                right.visible += child.visible
                right.breaks += child.breaks
            }
        }
        branch.visible -= right.visible
        branch.breaks -= right.breaks
        if let parent = branch.parent {
            let index = (parent.branches.firstIndex { $0 === branch } ?? parent.branches.count - 1) + 1
            parent.branches.insert(right, at: index)
            right.parent = parent
            if parent.branches.count > Self.maxChildrenPerBranch { splitBranch(parent) }
        } else {
            let newRoot = Branch(isBottom: false)
            newRoot.branches = [branch, right]
            newRoot.visible = branch.visible + right.visible
            newRoot.breaks = branch.breaks + right.breaks
            branch.parent = newRoot
            right.parent = newRoot
            root = newRoot
        }
    }

    /// Gives back memory an array no longer needs (after a split or a large removal).
    @inline(__always)
    static func trimCapacity<T>(_ array: inout ContiguousArray<T>) {
        guard array.capacity > 2 * array.count + 16 else { return }
        var trimmed = ContiguousArray<T>()
        trimmed.reserveCapacity(array.count)
        trimmed.append(contentsOf: array)
        array = trimmed
    }

    // MARK: Copying

    /// A deep copy with the same document order and indexes (leaves are repacked).
    func copy() -> ReplicatingArrayStorage {
        let result = ReplicatingArrayStorage(isBreak: isBreak)
        result.replicas = replicas
        result.replicaIndex = replicaIndex
        result.idIndex = ContiguousArray(repeating: LeafIndexColumn(), count: replicas.count)
        for (i, column) in idIndex.enumerated() { result.idIndex[i].append(0, count: column.count) }
        result.maxLamport = maxLamport
        result.pendingInsertions = pendingInsertions
        result.pendingRemovals = pendingRemovals
        result.rejectedOperationCount = rejectedOperationCount
        var leaf: Leaf? = firstLeaf
        while let source = leaf {
            result.appendBuilt(runs: source.runs, content: source.content)
            leaf = source.next
        }
        return result
    }

    /// Appends runs (with the content of their visible elements) at the end of the array, as a new
    /// leaf unless the last leaf is empty; used to build a storage in document order.
    func appendBuilt<R: Collection<Run>, C: Collection<Element>>(runs: R, content: C) {
        var last = leafTable[leafTable.count - 1]
        while last.next != nil, let next = last.next { last = next }
        if !last.runs.isEmpty {
            last = split(last, at: last.runs.count)
        }
        last.runs.append(contentsOf: runs)
        last.content.append(contentsOf: content)
        let breaks = countBreaks(in: content)
        last.breaks = breaks
        adjustCounts(from: last, visible: content.count, breaks: breaks)
        for r in runs { idIndex[Int(r.replica)].assign(last.number, to: Int(r.counter)..<Int(r.end)) }
        normalize(last)
    }
}
