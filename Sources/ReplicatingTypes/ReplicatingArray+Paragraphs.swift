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
    func startOfParagraph(_ paragraph: Int) -> Int {
        guard paragraph > 0 else { return 0 }
        // A visible break always ends its leaf, so paragraph k starts right after the leaf holding break k-1.
        let (leaf, _) = leaf(holdingBreak: paragraph - 1)
        return start(of: leaf).visible + leaves[leaf].content.count
    }

    func rangeOfParagraph(_ paragraph: Int) -> Range<Int> {
        let start = startOfParagraph(paragraph)
        let end = paragraph < breakCount ? startOfParagraph(paragraph + 1) - 1 : count
        return start..<end
    }

    func paragraph(containing index: Int) -> Int {
        guard index < count else { return breakCount }
        let (leaf, _) = leaf(holding: index)
        // Only a leaf's last visible element can be a break, so none precedes `index` inside the leaf.
        return start(of: leaf).breaks
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
