/// The physical floor for a replay: a plain gap buffer with no identity, history or index.
struct GapBuffer<Element> {
    private var storage: [Element]
    private var gapStart = 0
    private var gapEnd: Int
    private let filler: Element

    init(capacity: Int, filler: Element) {
        storage = Array(repeating: filler, count: Swift.max(capacity, 16))
        gapEnd = storage.count
        self.filler = filler
    }

    var count: Int { storage.count - (gapEnd - gapStart) }

    private mutating func moveGap(to position: Int) {
        if position < gapStart {
            let n = gapStart - position
            storage.withUnsafeMutableBufferPointer { b in
                let base = b.baseAddress!
                (base + gapEnd - n).update(from: base + position, count: n)
            }
            gapStart -= n
            gapEnd -= n
        } else if position > gapStart {
            let n = position - gapStart
            storage.withUnsafeMutableBufferPointer { b in
                let base = b.baseAddress!
                (base + gapStart).update(from: base + gapEnd, count: n)
            }
            gapStart += n
            gapEnd += n
        }
    }

    mutating func replace(at position: Int, removing n: Int, with elements: [Element]) {
        moveGap(to: position)
        gapEnd += n
        if gapEnd - gapStart < elements.count {
            let tail = storage.count - gapEnd
            let newCount = Swift.max(storage.count * 2, count + elements.count + 16)
            var grown = Array(storage[0..<gapStart])
            grown.append(contentsOf: repeatElement(filler, count: newCount - gapStart - tail))
            grown.append(contentsOf: storage[gapEnd...])
            storage = grown
            gapEnd = newCount - tail
        }
        for e in elements {
            storage[gapStart] = e
            gapStart += 1
        }
    }

    var elements: [Element] { Array(storage[0..<gapStart]) + Array(storage[gapEnd...]) }
}
