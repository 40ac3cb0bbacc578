/// Internal storage of a `ReplicatingArray`: runs of element records in leaves, a B+ tree of
/// visible counts over the leaves, and an index from element ID to leaf.
///
/// Model: the document order of every element ever inserted (tombstones included) is the order of
/// runs, leaf by leaf. A leaf holds its runs' records and, separately, the content of its visible
/// elements (tombstones keep no content). A leaf holds at most `maxContentPerLeaf` visible
/// elements and `maxRunsPerLeaf` runs, and any number of paragraph breaks (when a paragraph-break
/// predicate is given): the break counts kept per leaf and per branch index paragraphs, so
/// finding paragraph p descends by breaks and then scans inside one leaf. Leaves that deletions
/// leave small are merged with a neighbour, so a deleted region does not keep a leaf per piece.
///
/// Layout: leaves and branches are plain values in two node arenas and refer to each other by
/// number, never by object reference. Walking the tree or the leaf list therefore costs no
/// reference counting (which dominated the time of an edit when they were objects), and changing
/// a node in place checks no uniqueness (which arrays of nodes did at every step).
final class ReplicatingArrayStorage<Element> {
    /// Sentinel replica index meaning "no anchor: the start of the array".
    static var noReplica: UInt16 { .max }
    /// Sentinel node number meaning "none" (no next leaf, no parent branch, no cursor).
    static var none: Int32 { -1 }
    static var maxRunsPerLeaf: Int { 64 }
    static var maxContentPerLeaf: Int { 1024 }
    static var maxChildrenPerBranch: Int { 32 }
    /// The ID index's entry for an element dropped by compaction: known, but no longer stored.
    static var compactedLeaf: UInt32 { .max }
    /// While a document-order state is decoded: counters not stored yet, and counters claimed by
    /// a run that is not yet placed.
    static var pendingLeaf: UInt32 { .max - 1 }
    static var claimedLeaf: UInt32 { .max - 2 }
    /// Leaf 0 is made first and every later leaf is placed after an existing one, so leaf 0
    /// always starts the document.
    static var firstLeaf: Int { 0 }

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

        /// The length, or 0 for tombstones; without a branch, since runs of both kinds alternate
        /// unpredictably in the leaves that scans walk.
        @inline(__always) var visibleLength: Int {
            let tombstoneMask = UInt32(bitPattern: Int32(bitPattern: lengthAndFlag) >> 31)
            return Int(lengthAndFlag & 0x7FFF_FFFF & ~tombstoneMask)
        }
        var end: UInt64 { counter + UInt64(length) }
    }

    /// Most distinct replicas one array records (replica indexes are 16 bits; one value is the
    /// "no anchor" sentinel).
    static var maxReplicas: Int { Int(UInt16.max) }
    static var maxRunLength: Int { 0x7FFF_FFFF }

    /// A run of records and the content of their visible elements, in document order; `breaks`
    /// counts the visible paragraph breaks among them. A leaf on the free list (merged away, its
    /// number waiting to be reused) has no runs and no parent.
    struct Leaf {
        var runs: ContiguousArray<Run> = []
        /// The runs, when the leaf is frozen (then `runs` is empty): see `FrozenRuns`.
        var frozen = FrozenRuns<Element>()
        var content = LeafContent<Element>()
        var breaks = 0
        /// The bottom branch holding this leaf.
        var parent: Int32
        /// The neighbouring leaves in document order, or `none`.
        var next: Int32 = ReplicatingArrayStorage.none
        var previous: Int32 = ReplicatingArrayStorage.none

        init(parent: Int32) {
            self.parent = parent
        }

        /// The index of the run holding visible element `index` of this leaf, and its offset;
        /// found from the nearer end of the leaf (typing at a leaf's end looks at one run).
        /// - Complexity: O(runs in the leaf)
        @inline(__always)
        func runHolding(visible index: Int) -> (run: Int, offset: Int, contentStart: Int) {
            let total = content.count
            if index < total, index > total / 2 {
                var end = total
                var r = runs.count - 1
                while r > 0 {
                    let start = end - runs[r].visibleLength
                    if index >= start, start < end { return (r, index - start, start) }
                    end = start
                    r -= 1
                }
                return (0, index, 0)
            }
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

        /// Number of visible elements in runs before `run`, counted from the nearer end of the
        /// leaf. - Complexity: O(runs in the leaf)
        @inline(__always)
        func contentStart(ofRun run: Int) -> Int {
            var total = 0
            if run > runs.count / 2 {
                for r in run..<runs.count { total += runs[r].visibleLength }
                return content.count - total
            }
            for r in 0..<run { total += runs[r].visibleLength }
            return total
        }
    }

    /// A node of the count tree: its children are leaves (`isBottom`) or branches, by number.
    struct Branch {
        var children: ContiguousArray<Int32> = []
        let isBottom: Bool
        var visible = 0
        var breaks = 0
        var parent: Int32 = ReplicatingArrayStorage.none

        init(isBottom: Bool) {
            self.isBottom = isBottom
        }
    }

    /// Every leaf ever made, by number; the ID index refers to leaves by number.
    var leaves = NodeArena<Leaf>()
    /// Every branch ever made, by number.
    var branches = NodeArena<Branch>()
    /// Numbers of leaves and branches merged away, for reuse (see `mergeIfSmall`).
    var freeLeaves: [Int32] = []
    var freeBranches: [Int32] = []
    var root: Int32 = 0
    /// Replica IDs by local index, and back.
    var replicas: ContiguousArray<ReplicaID> = []
    var replicaIndex: [ReplicaID: UInt16] = [:]
    /// For each replica index, the leaf number of each of its elements, by counter.
    var idIndex = NodeArena<LeafIndexColumn>()
    var maxLamport: UInt64 = 0
    /// Number of removed elements dropped by compaction (they still count as known).
    var compactedCount = 0
    /// Number of frozen leaves thawed (see `FrozenRuns`), for tests and statistics.
    var thawedCount = 0
    let isBreak: ((Element) -> Bool)?
    /// `isBreak`'s answers below U+0100, when the elements are scalars (see `ScalarBreakTable`).
    let breakTable: ScalarBreakTable
    /// The leaf of the last local edit (or `none`) and the index of its first visible element. A
    /// count change in any other leaf clears it (splits move content after it, which keeps its
    /// start valid).
    var cursorLeaf: Int32 = ReplicatingArrayStorage.none
    var cursorStart = 0
    /// The run of the last insertion (local or remote), or the visible run left before the
    /// last removal from the middle or end of a run (a backspace): its leaf (or `none`), its
    /// index there and the index of its first visible element in the leaf. Any other change to
    /// any leaf's runs or counts forgets it (`forgetRunHint`), so while set it is exact; typing
    /// and backspacing, local or arriving from a peer, find their run through it without a scan
    /// of the leaf's runs (`runHolding(visible:inLeaf:)`, `locateForEdit`).
    var hintLeaf: Int32 = ReplicatingArrayStorage.none
    var hintRun = 0
    var hintStart = 0
    /// How many remote insertions and removals found their run through the run hint (for tests).
    var remoteHintHits = 0
    /// The last leaf whose visible counts changed, the change not yet added to the branches
    /// above it, and those branches from the bottom up (see `adjustCounts`). Readers of branch
    /// counts add it where they pass one of them (`deferredChange(ofBranch:level:)`).
    var deferredLeaf: Int32 = ReplicatingArrayStorage.none
    var deferredVisible = 0
    var deferredBreaks = 0
    var deferredPath: ContiguousArray<Int32> = []
    /// Insertions waiting for an earlier insertion of their replica or for their anchor.
    var pendingInsertions: [ReplicatingArrayInsertion<Element>] = []
    /// Operations dropped because they could never be applied.
    var rejectedOperationCount = 0
    /// Removals of elements this copy does not have yet, by replica.
    var pendingRemovals: [ReplicaID: [Range<UInt64>]] = [:]

    init(isBreak: ((Element) -> Bool)?) {
        self.isBreak = isBreak
        self.breakTable = ScalarBreakTable(isBreak)
        var root = Branch(isBottom: true)
        root.children.append(Int32(Self.firstLeaf))
        branches.append(root)
        leaves.append(Leaf(parent: 0))
    }

    deinit {
        leaves.deallocate()
        branches.deallocate()
        for replica in idIndex.indices { idIndex[replica].deallocate() }
        idIndex.deallocate()
    }

    /// The root is above every leaf, so the deferred change always belongs to its counts.
    var count: Int { branches[Int(root)].visible &+ deferredVisible }

    /// Number of visible breaks.
    var breakCount: Int { branches[Int(root)].breaks &+ deferredBreaks }

    /// The leaf after `leaf` in document order, if any.
    @inline(__always)
    func leaf(after leaf: Int) -> Int? {
        let next = leaves[leaf].next
        return next == Self.none ? nil : Int(next)
    }

    // MARK: Replicas

    /// The most recently interned replica, to skip hashing on the common path. Only edits
    /// write it: reading an array never writes its storage, so copies that share a storage can
    /// be read on several threads at once.
    private var lastInterned: (id: ReplicaID, index: UInt16)?

    @inline(__always)
    func index(of replica: ReplicaID) -> UInt16? {
        if let last = lastInterned, last.id == replica { return last.index }
        return replicaIndex[replica]
    }

    @inline(__always)
    func intern(_ replica: ReplicaID) -> UInt16 {
        if let last = lastInterned, last.id == replica { return last.index }
        if let index = replicaIndex[replica] {
            lastInterned = (replica, index)
            return index
        }
        precondition(replicas.count < Self.maxReplicas, "more than \(Self.maxReplicas) replicas in one array")
        let index = UInt16(replicas.count)
        replicas.append(replica)
        replicaIndex[replica] = index
        idIndex.append(LeafIndexColumn())
        lastInterned = (replica, index)
        return index
    }

    /// Number of elements of `replica` this copy has (the next counter it expects).
    func known(_ replica: ReplicaID) -> UInt64 {
        guard let index = index(of: replica) else { return 0 }
        return UInt64(idIndex[Int(index)].count)
    }

    func contains(_ id: ElementID) -> Bool { id.counter < known(id.replica) }

    /// True when this copy knew `id` but dropped it in a compaction.
    func isCompacted(_ id: ElementID) -> Bool {
        guard compactedCount > 0, let replica = index(of: id.replica), id.counter < UInt64(idIndex[Int(replica)].count) else { return false }
        // A known counter is stored in the leaf its entry names, or compacted (its entry is
        // `compactedLeaf`, or a gap's neighbour's leaf: see `LeafIndexColumn.absorb`).
        return locate(replica: replica, counter: id.counter) == nil
    }

    @inline(__always)
    func timestamp(of run: Run, offset: Int) -> LamportTimestamp {
        LamportTimestamp(counter: run.lamport + UInt64(offset), replica: replicas[Int(run.replica)])
    }

    func anchor(of run: Run) -> ElementID? {
        run.anchorReplica == Self.noReplica
            ? nil : ElementID(replica: replicas[Int(run.anchorReplica)], counter: run.anchorCounter)
    }

    /// The ID of element `offset` of run `run` in `leaf`.
    @inline(__always)
    func id(leaf: Int, run: Int, offset: Int) -> ElementID {
        let r = isFrozen(leaf) ? storedRun(leaf: leaf, run: run) : leaves[leaf].runs[run]
        return ElementID(replica: replicas[Int(r.replica)], counter: r.counter + UInt64(offset))
    }

    // MARK: Finding

    /// The leaf holding visible element `index`, and the element's index within that leaf.
    /// - Complexity: O(log n)
    @inline(__always)
    func leaf(holding index: Int) -> (leaf: Int, index: Int) {
        let (leaf, i, _) = descend(to: index, countingBreaks: false)
        return (leaf, i)
    }

    /// The leaf whose elements (or, `countingBreaks`, whose visible breaks) include number
    /// `index`, its number within that leaf, and the other count (breaks, or visible elements)
    /// before that leaf: a walk down the count tree.
    @inline(__always)
    func descend(to index: Int, countingBreaks: Bool) -> (leaf: Int, index: Int, otherBefore: Int) {
        var node = Int(root)
        var remaining = index
        var other = 0
        // The level of the node's children in `deferredPath` (bottom branches are level 0).
        var childLevel = deferredPath.count - 2
        while !branches[node].isBottom {
            var i = 0
            let last = branches[node].children.count - 1
            while i < last {
                let child = Int(branches[node].children[i])
                let deferred = deferredChange(ofBranch: child, level: childLevel)
                let visible = branches[child].visible &+ deferred.visible
                let breaks = branches[child].breaks &+ deferred.breaks
                let count = countingBreaks ? breaks : visible
                if remaining < count { break }
                remaining -= count
                other &+= countingBreaks ? visible : breaks
                i += 1
            }
            node = Int(branches[node].children[i])
            childLevel -= 1
        }
        var i = 0
        let last = branches[node].children.count - 1
        while i < last {
            let child = Int(branches[node].children[i])
            let visible = leaves[child].content.count
            let breaks = leaves[child].breaks
            let count = countingBreaks ? breaks : visible
            if remaining < count { break }
            remaining -= count
            other &+= countingBreaks ? visible : breaks
            i += 1
        }
        return (Int(branches[node].children[i]), remaining, other)
    }

    /// The leaf holding visible element `index`, through the cursor cache: consecutive local edits
    /// in one leaf (typing) skip the descent.
    /// - Complexity: O(1) on a cache hit, O(log n) otherwise
    @inline(__always)
    func leafForEdit(holding index: Int) -> (leaf: Int, index: Int) {
        if cursorLeaf != Self.none, index >= cursorStart, index - cursorStart < leaves[Int(cursorLeaf)].content.count {
            return (Int(cursorLeaf), index - cursorStart)
        }
        let (leaf, i) = leaf(holding: index)
        thaw(leaf)
        cursorLeaf = Int32(leaf)
        cursorStart = index - i
        return (leaf, i)
    }

    @inline(__always)
    func forgetRunHint() { hintLeaf = Self.none }

    /// `leaves[leaf].runHolding(visible: index)`, through the run hint when it holds `index`.
    @inline(__always)
    func runHolding(visible index: Int, inLeaf leaf: Int) -> (run: Int, offset: Int, contentStart: Int) {
        if hintLeaf == Int32(leaf), index >= hintStart, hintRun < leaves[leaf].runs.count,
           index - hintStart < leaves[leaf].runs[hintRun].visibleLength {
            return (hintRun, index - hintStart, hintStart)
        }
        return leaves[leaf].runHolding(visible: index)
    }

    /// The leaf holding paragraph break number `index` (0-based), the break's number among the
    /// leaf's breaks, and the visible elements before the leaf.
    /// - Complexity: O(log n)
    func leaf(holdingBreak index: Int) -> (leaf: Int, index: Int, visibleBefore: Int) {
        let (leaf, i, before) = descend(to: index, countingBreaks: true)
        return (leaf, i, before)
    }

    /// Visible elements and breaks before `leaf` in the whole array.
    /// - Complexity: O(log n)
    func start(of leaf: Int) -> (visible: Int, breaks: Int) {
        var visible = 0
        var breaks = 0
        let target = Int32(leaf)
        var branch = Int(leaves[leaf].parent)
        for i in 0..<branches[branch].children.count {
            let sibling = branches[branch].children[i]
            if sibling == target { break }
            visible += leaves[Int(sibling)].content.count
            breaks += leaves[Int(sibling)].breaks
        }
        var level = 0 // of `branch` and its siblings in `deferredPath`
        while branches[branch].parent != Self.none {
            let parent = Int(branches[branch].parent)
            let child = Int32(branch)
            for i in 0..<branches[parent].children.count {
                let sibling = branches[parent].children[i]
                if sibling == child { break }
                let deferred = deferredChange(ofBranch: Int(sibling), level: level)
                visible += branches[Int(sibling)].visible &+ deferred.visible
                breaks += branches[Int(sibling)].breaks &+ deferred.breaks
            }
            branch = parent
            level += 1
        }
        return (visible, breaks)
    }

    /// The leaf, run and offset of an element by ID, if this copy stores it (nil when unknown or
    /// dropped by compaction: a dropped counter's entry names no leaf, or a leaf without it).
    /// - Complexity: O(runs in one leaf)
    @inline(__always)
    func locate(replica: UInt16, counter: UInt64) -> (leaf: Int, run: Int, offset: Int)? {
        guard counter < UInt64(idIndex[Int(replica)].count) else { return nil }
        let entry = idIndex[Int(replica)][Int(counter)]
        // `compactedLeaf` (and the decoding sentinels) name no leaf.
        guard Int(entry) < leaves.count else { return nil }
        let leaf = Int(entry)
        if isFrozen(leaf) {
            guard let (run, stored) = leaves[leaf].frozen.runHolding(replica: replica, counter: counter) else { return nil }
            return (leaf, run, Int(counter - stored.counter))
        }
        guard let run = leaves[leaf].runHolding(replica: replica, counter: counter) else { return nil }
        return (leaf, run, Int(counter - leaves[leaf].runs[run].counter))
    }

    // MARK: Counts

    /// Adds `visible` and `breaks` to the counts of every branch above `leaf`, deferred: they are
    /// written when an edit changes another leaf or the tree changes shape, and until then every
    /// reader adds them (`count`, `deferredChange`). Typing in one leaf thus writes no branch.
    @inline(__always)
    func adjustCounts(from leaf: Int, visible: Int, breaks: Int) {
        forgetRunHint()
        if Int32(leaf) != cursorLeaf { cursorLeaf = Self.none }
        if Int32(leaf) != deferredLeaf { deferCounts(of: leaf) }
        deferredVisible &+= visible
        deferredBreaks &+= breaks
    }

    /// Adds the deferred change to the branches above its leaf, then defers `leaf`'s.
    private func deferCounts(of leaf: Int) {
        settleCounts()
        deferredLeaf = Int32(leaf)
        var branch = leaves[leaf].parent
        while branch != Self.none {
            deferredPath.append(branch)
            branch = branches[Int(branch)].parent
        }
    }

    /// Adds the deferred change to the branches above its leaf; afterwards every branch count is
    /// exact. Called before the tree changes shape.
    func settleCounts() {
        guard deferredLeaf != Self.none else { return }
        for branch in deferredPath {
            let node = branches.address(of: Int(branch))
            node.pointee.visible &+= deferredVisible
            node.pointee.breaks &+= deferredBreaks
        }
        deferredLeaf = Self.none
        deferredVisible = 0
        deferredBreaks = 0
        deferredPath.removeAll(keepingCapacity: true)
    }

    /// What the branch counts of `branch` lack, given that it sits at `level` (bottom branches
    /// are level 0): the deferred change when it is above the deferred leaf, else nothing.
    @inline(__always)
    func deferredChange(ofBranch branch: Int, level: Int) -> (visible: Int, breaks: Int) {
        guard level >= 0, level < deferredPath.count, deferredPath[level] == Int32(branch) else { return (0, 0) }
        return (deferredVisible, deferredBreaks)
    }

    @inline(__always)
    func countBreaks<C: Collection>(in elements: C) -> Int where C.Element == Element {
        guard let isBreak else { return 0 }
        var n = 0
        for e in elements where isBreak(e) { n += 1 }
        return n
    }
}
