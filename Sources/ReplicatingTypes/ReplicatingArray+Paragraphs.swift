extension ReplicatingArray {
    /// Number of paragraphs: one more than the number of visible breaks (so an empty array, and an
    /// array ending in a break, have a last, empty paragraph). Without a break predicate, 1.
    /// - Complexity: O(1)
    public var paragraphCount: Int { storage.root.breaks + 1 }

    /// The index of the first element of paragraph `paragraph` (after the previous break).
    /// - Complexity: O(log n)
    public func startOfParagraph(_ paragraph: Int) -> Int {
        precondition(paragraph >= 0 && paragraph < paragraphCount, "paragraph out of range")
        guard paragraph > 0 else { return 0 }
        // A visible break always ends its leaf, so paragraph k starts right after the leaf holding break k-1.
        let (leaf, _) = storage.leaf(holdingBreak: paragraph - 1)
        return storage.start(of: leaf).visible + leaf.content.count
    }

    /// The range of paragraph `paragraph`'s elements, without its final break.
    /// - Complexity: O(log n)
    public func rangeOfParagraph(_ paragraph: Int) -> Range<Int> {
        let start = startOfParagraph(paragraph)
        let end = paragraph + 1 < paragraphCount ? startOfParagraph(paragraph + 1) - 1 : count
        return start..<end
    }

    /// The paragraph holding the element at `index` (`index == count` is in the last paragraph).
    /// - Complexity: O(log n)
    public func paragraph(containing index: Int) -> Int {
        precondition(index >= 0 && index <= count, "index out of range")
        guard index < count else { return paragraphCount - 1 }
        let (leaf, _) = storage.leaf(holding: index)
        // Only a leaf's last visible element can be a break, so none precedes `index` inside the leaf.
        return storage.start(of: leaf).breaks
    }
}
