import Foundation
import ReplicatingTypes

/// The pool of replica IDs local edits are made as (`LocalReplicas`), kept in the data directory
/// as `replicas` (one decimal ID a line) so that a restarted daemon goes on reusing them
/// (protocol/decisions/replica-reuse.md).
///
/// Guarantees: under `.sync` durability the pool read back is the one last written; under
/// `.batch` it is read back empty, since edits peers heard of may be missing from the log after
/// a crash, and a replica reused then could give an ID they hold to another character. A line
/// that is not an ID is skipped; at most `LocalReplicas.maximumReplicas` are read. Losing the
/// file costs only reuse (new replicas are minted), never correctness, so it is written
/// atomically but not synced on its own.
extension DocumentStore {
    var localReplicasPath: String { path + "/replicas" }

    /// The pool the previous run kept (empty under `.batch` durability, or when there is none).
    func loadLocalReplicas() -> [ReplicaID] {
        guard durability == .sync else { return [] }
        let bytes: [UInt8]?
        do { bytes = try OwnedFiles.read(localReplicasPath, limit: LocalReplicas.maximumReplicas * 21) } catch { return [] }
        guard let bytes else { return [] }
        var replicas: [ReplicaID] = []
        for line in bytes.split(separator: UInt8(ascii: "\n")).prefix(LocalReplicas.maximumReplicas) {
            if let value = UInt64(String(decoding: line, as: UTF8.self)), value != 0 { replicas.append(ReplicaID(value)) }
        }
        return replicas
    }

    /// Removes the kept pool: a restart mints new replicas.
    func forgetLocalReplicas() {
        _ = unlink(localReplicasPath)
    }

    /// Keeps `replicas` as the pool a restart reuses. A failure costs only reuse.
    func recordLocalReplicas(_ replicas: [ReplicaID]) throws {
        let text = replicas.map { "\($0.rawValue)\n" }.joined()
        try FileSystem.writeAtomically(Array(text.utf8), to: localReplicasPath)
    }
}
