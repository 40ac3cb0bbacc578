import Testing
import EditingTraces
import ReplicatingTypes

/// Every trace in ../shared/traces, replayed edit by edit, yields exactly the trace's final text;
/// and the same edits shipped as operations to a second replica give the same document.
@Suite struct TraceReplayTests {
    static let traces = EditingTrace.sharedTracePaths(from: #filePath)

    @Test func sharedTracesAreFound() {
        #expect(Self.traces.count >= 2, "expected the shared traces beside the repository")
    }

    @Test(arguments: traces)
    func replayYieldsFinalText(path: String) throws {
        let trace = try EditingTrace(contentsOf: path)
        var local = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1), paragraphBreak: ReplicatingText.isLineBreak)
        var remote = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(2), paragraphBreak: ReplicatingText.isLineBreak)
        for patch in trace.patches {
            if patch.removeCount > 0, let op = local.removeSubrange(patch.position..<(patch.position + patch.removeCount)) { remote.apply(op) }
            if let op = local.insert(contentsOf: patch.insert, at: patch.position) { remote.apply(op) }
        }
        #expect(local.elements.string == trace.endContent)
        #expect(remote == local)
        local._checkInvariants()
        remote._checkInvariants()
        let decoded = try ReplicatingArray<Unicode.Scalar>(decodingState: local.encodedState(), replica: ReplicaID(3), paragraphBreak: ReplicatingText.isLineBreak)
        #expect(decoded == local)
    }
}
