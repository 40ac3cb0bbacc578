import ReplicatingTypes

/// One editor session's own edits of one document, grouped into the steps its user undoes at
/// once, and the steps undone since (for redo).
///
/// Guarantees: undoing a step reverts only what this session did in it, whatever others typed
/// since: characters it inserted are removed by ID (wherever they are now, and only if still
/// there), characters it removed are put back where they stood, so they land in place even
/// among others' later text: a stretch the step replaced goes back exactly where the text that
/// replaced it begins (so what others typed right before or after that text stays before or
/// after it), any other removed stretch where its own tombstones stand. This holds whatever
/// the step's size: a step is its own removals and insertions by element identity, never a
/// range of text. A new edit clears the redo steps.
struct UndoHistory {
    /// What one step did: elements it inserted, and elements it removed with their content.
    struct Step {
        var group: Int?
        var inserted: [ElementID] = []
        var removed: [(id: ElementID, scalar: Unicode.Scalar)] = []
        /// For a removed stretch that the step replaced at once (a removal right followed by an
        /// insertion at its place): its first element (in text order) to the first element
        /// inserted in its place and how many were. Undo puts the stretch back where that
        /// insertion begins.
        var replacedBy: [ElementID: (id: ElementID, count: Int)] = [:]
        /// Every element of such a replaced stretch: the stretch's first element and its place in
        /// it. The insertion may hang from the stretch's own first element (edit-intent.md,
        /// rule 6), so the stretch's tombstones need not stand together; undo puts it back whole.
        var stretchOf: [ElementID: (first: ElementID, place: Int)] = [:]
        var isEmpty: Bool { inserted.isEmpty && removed.isEmpty }
        var size: Int { inserted.count + removed.count }
    }

    /// Steps kept for undo at least (beyond a quarter more, the oldest go).
    static let limit = 1000
    /// Characters one history keeps at most (16-24 bytes each); the oldest steps go first. An
    /// edit larger than this (a huge paste or deletion) is not recorded and cannot be undone here.
    static let characterLimit = 1 << 20

    private(set) var undoSteps: [Step] = []
    private(set) var redoSteps: [Step] = []
    /// The characters `undoSteps` hold, kept as they change so that no keystroke sums them.
    private var undoCharacters = 0
    /// Removed characters that undo or redo put back are new elements: the element now standing
    /// for each old one, so older steps still find the characters they inserted.
    private var replacements: [ElementID: ElementID] = [:]

    /// Records an edit's operations, made to a document that was `before` just before them.
    /// Edits with the same non-nil `group` (the editor's undo block) form one step.
    mutating func record(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], before: ReplicatingText, group: Int?) {
        let size = operations.reduce(0) { total, operation in
            switch operation {
            case .insert(let insertion): return total + insertion.count
            case .remove(let ranges): return total + ranges.reduce(0) { $0 + Int($1.count) }
            }
        }
        guard size <= Self.characterLimit else {
            // Too large to keep: undo stops at this edit rather than reach past it.
            undoSteps = []
            redoSteps = []
            undoCharacters = 0
            return
        }
        var step = Step(group: group)
        // The removal just recorded: its first element and that element's index in `before`,
        // and all its elements with their indices.
        var lastRemoval: (first: ElementID, index: Int)?
        var lastRemoved: [(id: ElementID, index: Int)] = []
        for operation in operations {
            switch operation {
            case .insert(let insertion):
                defer { lastRemoval = nil }
                guard case .elements = insertion.content else { continue }
                // A replacement: the insertion is anchored to the character right before the
                // stretch just removed, or to the stretch's first character (edits come last in
                // the text first, so `before` still has both at their places).
                if let removal = lastRemoval, insertion.count > 0,
                   insertion.anchor == removal.first
                    || insertion.anchor.map({ before.scalars.index(of: $0) == removal.index - 1 }) ?? (removal.index == 0) {
                    step.replacedBy[removal.first] = (insertion.id, insertion.count)
                    for (place, element) in lastRemoved.sorted(by: { $0.index < $1.index }).enumerated() {
                        step.stretchOf[element.id] = (removal.first, place)
                    }
                }
                for k in 0..<insertion.count {
                    step.inserted.append(ElementID(replica: insertion.id.replica, counter: insertion.id.counter + UInt64(k)))
                }
            case .remove(let ranges):
                lastRemoval = nil
                lastRemoved = []
                for range in ranges {
                    for counter in range.counters {
                        let id = ElementID(replica: range.start.replica, counter: counter)
                        guard let index = before.scalars.index(of: id) else { continue }
                        step.removed.append((id, before.scalars[index]))
                        lastRemoved.append((id, index))
                        if lastRemoval.map({ index < $0.index }) ?? true { lastRemoval = (id, index) }
                    }
                }
            }
        }
        guard !step.isEmpty else { return }
        redoSteps = []
        if let group, let last = undoSteps.last, last.group == group {
            undoSteps[undoSteps.count - 1].inserted += step.inserted
            undoSteps[undoSteps.count - 1].removed += step.removed
            undoSteps[undoSteps.count - 1].replacedBy.merge(step.replacedBy) { old, _ in old }
            undoSteps[undoSteps.count - 1].stretchOf.merge(step.stretchOf) { old, _ in old }
            undoCharacters += step.size
        } else {
            pushUndo(step)
        }
        // Trimmed in chunks, so that dropping the oldest costs O(1) per edit on average.
        if undoSteps.count >= Self.limit + Self.limit / 4 || undoCharacters > Self.characterLimit {
            var drop = max(0, undoSteps.count - Self.limit)
            undoCharacters -= undoSteps[..<drop].reduce(0) { $0 + $1.size }
            while drop < undoSteps.count - 1 && undoCharacters > Self.characterLimit {
                undoCharacters -= undoSteps[drop].size
                drop += 1
            }
            undoSteps.removeFirst(drop)
        }
    }

    private mutating func pushUndo(_ step: Step) {
        undoSteps.append(step)
        undoCharacters += step.size
    }

    private mutating func popUndo() -> Step? {
        guard let step = undoSteps.popLast() else { return nil }
        undoCharacters -= step.size
        return step
    }

    /// Reverts the last step that still changes something in `text` (edited as a replica of its
    /// own; steps whose effect others already undid are skipped) and keeps its inverse for redo.
    /// Returns the operations, empty when there is nothing left to undo.
    mutating func undo(in text: inout ReplicatingText) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        revertLast(undoing: true, in: &text)
    }

    /// Reapplies the last undone step; returns the operations.
    mutating func redo(in text: inout ReplicatingText) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        revertLast(undoing: false, in: &text)
    }

    /// Reverts the last undo step (or redo step) that still changes something, and keeps its
    /// inverse on the other stack.
    private mutating func revertLast(undoing: Bool, in text: inout ReplicatingText) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        while let step = undoing ? popUndo() : redoSteps.popLast() {
            let (operations, inverse) = revert(step, in: &text)
            if !operations.isEmpty {
                if undoing { redoSteps.append(inverse) } else { pushUndo(inverse) }
                return operations
            }
        }
        return []
    }

    /// Removed elements undo or redo may still put back, which they find by the place of their
    /// tombstones: the document must keep those. (Inserted elements are removed by ID, which
    /// needs nothing kept: removing a dropped element is a no-op.)
    var referencedIDs: [ElementIDRange] {
        var ids: [ElementIDRange] = []
        for step in undoSteps + redoSteps {
            for (id, _) in step.removed { ids.append(ElementIDRange(start: current(id), count: 1)) }
        }
        return ids
    }

    /// The element that stands for `id` now.
    private func current(_ id: ElementID) -> ElementID {
        var id = id
        while let next = replacements[id] { id = next }
        return id
    }

    /// The operations that revert `step` in `text`, and the step that reverts them.
    private mutating func revert(_ step: Step, in text: inout ReplicatingText) -> ([ReplicatingArrayOperation<Unicode.Scalar>], Step) {
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        var inverse = Step(group: nil)
        // Put removed characters back where they stood: a replaced stretch whole, hanging from
        // the first character of the text that replaced it (which this undo removes), so what
        // others typed right before or after that text, even while the undo is on its way, stays
        // on its side (edit-intent.md, rule 6); any other stretch where its tombstones stand.
        // They are inserted as new text anchored to a visible character or to one this very edit
        // removes, never to an older tombstone, which peers may drop once every copy has seen the
        // removal. Characters whose tombstones are adjacent in one run go back as one insertion.
        var restoring: [(id: ElementID, original: ElementID, scalar: Unicode.Scalar)] = []
        // What this revert removed of the step's insertions (a replaced stretch may hang from it).
        var removedNow: Set<ElementID> = []
        func place(of first: (id: ElementID, original: ElementID, scalar: Unicode.Scalar)) -> Int? {
            if let replacing = step.replacedBy[step.stretchOf[first.original]?.first ?? first.original],
               let index = text.scalars.index(of: current(replacing.id)) {
                return index
            }
            return text.scalars.index(after: first.id)
        }
        func restore(replacing: (id: ElementID, count: Int)? = nil) {
            guard let first = restoring.first else { return }
            var restored: ReplicatingArrayOperation<Unicode.Scalar>?
            if let replacing, removedNow.contains(current(replacing.id)) || text.scalars.index(of: current(replacing.id)) != nil {
                // The undo replaces the text that replaced the stretch: the stretch hangs from that
                // text's first character, which this very edit removes (edit-intent.md, rule 6), so
                // what others type right before or after it stays on its side. That text is gone
                // first, so the stretch goes back as one change, not between its first character
                // and the rest.
                restored = text.insert(restoring.map(\.scalar), after: current(replacing.id))
            } else if let at = place(of: first) {
                restored = text.replace(at..<at, with: restoring.map(\.scalar)).last
            }
            guard let operation = restored, case .insert(let insertion) = operation else { return }
            operations.append(operation)
            for (k, old) in restoring.enumerated() {
                let new = ElementID(replica: insertion.id.replica, counter: insertion.id.counter + UInt64(k))
                replacements[old.id] = new
                inverse.inserted.append(new)
            }
            if let replacing {
                // Redo replaces the restored stretch by that text again, the same way.
                let replacingFirst = current(replacing.id)
                inverse.replacedBy[replacingFirst] = (insertion.id, restoring.count)
                for k in 0..<replacing.count {
                    let id = current(ElementID(replica: replacing.id.replica, counter: replacing.id.counter + UInt64(k)))
                    inverse.stretchOf[id] = (replacingFirst, k)
                }
            }
        }
        restoring = []
        for (original, scalar) in step.removed.reversed() where step.stretchOf[original] == nil {
            let id = current(original)
            guard text.scalars.contains(id), text.scalars.index(of: id) == nil else { continue }
            if let last = restoring.last, text.scalars.isDirectlyAfter(id, last.id) {
                restoring.append((id, original, scalar))
            } else if let first = restoring.first, text.scalars.isDirectlyAfter(first.id, id) {
                restoring.insert((id, original, scalar), at: 0)   // removed back to front (backspace)
            } else {
                restore()
                restoring = [(id, original, scalar)]
            }
        }
        restore()
        // Remove what the step inserted and is still there, a stretch of adjacent characters at a time.
        let visible = step.inserted.map(current).compactMap { id in text.scalars.index(of: id).map { (index: $0, id: id) } }
            .sorted { $0.index > $1.index }
        var k = 0
        while k < visible.count {
            var low = k
            while low + 1 < visible.count, visible[low + 1].index == visible[low].index - 1 { low += 1 }
            for entry in visible[k...low] {
                inverse.removed.append((entry.id, text.scalars[entry.index]))
                removedNow.insert(entry.id)
            }
            operations += text.replace(visible[low].index..<(visible[k].index + 1), with: [])
            k = low + 1
        }
        // A replaced stretch goes back whole, in its order, where the text that replaced it began
        // (after that text is removed above: its first character is the anchor).
        var stretches: [ElementID: [(place: Int, id: ElementID, original: ElementID, scalar: Unicode.Scalar)]] = [:]
        var firsts: [ElementID] = []
        // What the step inserted and then replaced itself (one undo block) stays out.
        let insertedByStep = Set(step.inserted)
        for (original, scalar) in step.removed where !insertedByStep.contains(original) {
            guard let (first, place) = step.stretchOf[original] else { continue }
            let id = current(original)
            guard text.scalars.contains(id), text.scalars.index(of: id) == nil else { continue }
            if stretches[first] == nil { firsts.append(first) }
            stretches[first, default: []].append((place, id, original, scalar))
        }
        for first in firsts {
            restoring = stretches[first, default: []].sorted { $0.place < $1.place }.map { ($0.id, $0.original, $0.scalar) }
            restore(replacing: step.replacedBy[first])
        }
        return (operations, inverse)
    }
}
