extension ReplicatingArray {
    /// Number of paragraphs: one more than the number of visible breaks (so an empty array, and an
    /// array ending in a break, have a last, empty paragraph). Without a break predicate, 1.
    /// - Complexity: O(1)
    public var paragraphCount: Int { storage.breakCount + 1 }

    /// The index of the first element of paragraph `paragraph` (after the previous break).
    /// - Complexity: O(log n)
    public func startOfParagraph(_ paragraph: Int) -> Int {
        precondition(paragraph >= 0 && paragraph < paragraphCount, "paragraph out of range")
        return storage.startOfParagraph(paragraph)
    }

    /// The range of paragraph `paragraph`'s elements, without its final break.
    /// - Complexity: O(log n)
    public func rangeOfParagraph(_ paragraph: Int) -> Range<Int> {
        precondition(paragraph >= 0 && paragraph < paragraphCount, "paragraph out of range")
        return storage.rangeOfParagraph(paragraph)
    }

    /// The paragraph holding the element at `index` (`index == count` is in the last paragraph).
    /// - Complexity: O(log n)
    public func paragraph(containing index: Int) -> Int {
        precondition(index >= 0 && index <= count, "index out of range")
        return storage.paragraph(containing: index)
    }
}

extension ReplicatingArrayStorage {
    /// The visible index of break number `number` (0-based, below `breakCount`): a descent by
    /// break counts to its leaf, then a scan inside that leaf. - Complexity: O(log n + leaf size)
    func indexOfBreak(_ number: Int) -> Int {
        let (leaf, k, visibleBefore) = leaf(holdingBreak: number)
        return visibleBefore + indexOfBreak(k, inLeaf: leaf)
    }

    /// The index within `leaf`'s content of its break number `k` (0-based, below its `breaks`).
    private func indexOfBreak(_ k: Int, inLeaf leaf: Int) -> Int {
        guard let isBreak else { preconditionFailure("breaks counted without a break predicate") }
        return leaves[leaf].content.withUnsafeElements { content in
            var seen = 0
            for i in content.indices where isBreak(content[i]) {
                if seen == k { return i }
                seen += 1
            }
            preconditionFailure("leaf break count above its breaks")
        }
    }

    func startOfParagraph(_ paragraph: Int) -> Int {
        paragraph > 0 ? indexOfBreak(paragraph - 1) + 1 : 0
    }

    func rangeOfParagraph(_ paragraph: Int) -> Range<Int> {
        let start = startOfParagraph(paragraph)
        let end = paragraph < breakCount ? indexOfBreak(paragraph) : count
        return start..<end
    }

    func paragraph(containing index: Int) -> Int {
        guard index < count else { return breakCount }
        let (leaf, i, breaksBefore) = descend(to: index, countingBreaks: false)
        let breaks = leaves[leaf].breaks
        guard breaks > 0 else { return breaksBefore }
        // Count from the nearer end of the leaf.
        return leaves[leaf].content.withUnsafeElements { content in
            if i <= content.count / 2 {
                return breaksBefore + countBreaks(in: UnsafeBufferPointer(rebasing: content[..<i]))
            }
            return breaksBefore + breaks - countBreaks(in: UnsafeBufferPointer(rebasing: content[i...]))
        }
    }

    /// Visible elements in `range`. - Complexity: O(log n + range.count)
    func elements(in range: Range<Int>) -> [Element] {
        guard !range.isEmpty else { return [] }
        var result: [Element] = []
        result.reserveCapacity(range.count)
        var (leaf, i) = leaf(holding: range.lowerBound)
        while result.count < range.count {
            let take = Swift.min(leaves[leaf].content.count - i, range.count - result.count)
            result.append(contentsOf: leaves[leaf].content[i..<(i + take)])
            guard let next = self.leaf(after: leaf) else { break }
            leaf = next
            i = 0
        }
        return result
    }
}
