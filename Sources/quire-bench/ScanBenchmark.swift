import Foundation
import QuireProject
import ReplicatingTypes

/// Sharing a folder, the steps before any network: scanning it (ignore rules, text sniffing),
/// reading every shared file's text, and building the replicated tree of its paths with its view.
/// The folder is `.build/checkouts` (the Swift packages, as in issue 21's scale goal).
struct ScanBenchmark {
    struct Result {
        var root = ""
        var files = 0
        var bytes = 0
        var leftOut = 0
        var ignored = 0
        var scanSeconds = 0.0
        var readSeconds = 0.0
        var treeSeconds = 0.0
        var viewSeconds = 0.0
        var treeHeapBytes = 0
        var operationBytes = 0
    }

    let root: String
    let repetitions: Int

    func run() throws -> Result {
        var result = Result()
        result.root = root
        var scanned = ProjectScanner.Result()
        var failure: Error?
        result.scanSeconds = Measure.median(repetitions) {
            do { scanned = try ProjectScanner().scan(root: root) } catch { failure = error }
        }
        if let failure { throw failure }
        result.files = scanned.files.count
        result.bytes = scanned.totalBytes
        result.leftOut = scanned.leftOut.count
        result.ignored = scanned.ignored
        var readBytes = 0
        result.readSeconds = Measure.median(repetitions) {
            readBytes = 0
            for file in scanned.files {
                readBytes += (try? ProjectReader.text(of: file.path, root: root).utf8.count) ?? 0
            }
        }
        var tree = ProjectTree(replica: ReplicaID(1))
        result.treeSeconds = Measure.median(repetitions) {
            tree = ProjectTree(replica: ReplicaID(1))
            for file in scanned.files { _ = try? tree.create(at: file.path) }
        }
        let heapBefore = Measure.heapInUse()
        var kept = ProjectTree(replica: ReplicaID(2))
        for operation in tree.operations { try kept.apply(operation) }
        result.treeHeapBytes = Measure.heapInUse() - heapBefore
        var view = ProjectView()
        result.viewSeconds = Measure.median(repetitions) { view = kept.view }
        guard view.paths.count == scanned.files.count, readBytes == scanned.totalBytes else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the tree or the texts do not match the scan"])
        }
        result.operationBytes = ProjectTree.Operation.encode(kept.operations).count
        return result
    }
}
