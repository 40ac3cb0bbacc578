import Foundation
import JSON

/// One recorded editing history in the josephg/editing-traces format (see ../shared/traces).
///
/// Guarantees: positions and lengths are in Unicode scalars, as the format defines; `patches`
/// flattens the transactions in order, so replaying them one after another from `startContent`
/// yields `endContent`.
public struct EditingTrace: Sendable {
    /// One splice: at `position`, remove `removeCount` scalars, then insert `insert`.
    public struct Patch: Sendable, Equatable {
        public var position: Int
        public var removeCount: Int
        public var insert: [Unicode.Scalar]

        public init(position: Int, removeCount: Int, insert: [Unicode.Scalar]) {
            self.position = position
            self.removeCount = removeCount
            self.insert = insert
        }
    }

    public var name: String
    public var startContent: String
    public var endContent: String
    public var patches: [Patch]

    public enum LoadError: Error, CustomStringConvertible {
        case unreadable(String, String)
        case malformed(String, String)

        public var description: String {
            switch self {
            case .unreadable(let path, let why): return "cannot read trace \(path): \(why)"
            case .malformed(let path, let why): return "trace \(path) is malformed: \(why)"
            }
        }
    }

    /// A trace made in memory (the benchmark's generated code-shaped histories).
    public init(name: String, startContent: String = "", endContent: String, patches: [Patch]) {
        self.name = name
        self.startContent = startContent
        self.endContent = endContent
        self.patches = patches
    }

    /// Loads a `.json` or `.json.gz` trace (gzip is undone with the system's `gzip -dc`).
    public init(contentsOf path: String) throws {
        let bytes: [UInt8]
        if path.hasSuffix(".gz") {
            bytes = try Self.gunzip(path)
        } else {
            guard let data = FileManager.default.contents(atPath: path) else { throw LoadError.unreadable(path, "no such file") }
            bytes = [UInt8](data)
        }
        let root: JSONValue
        do {
            root = try JSONParser(maximumDepth: 16).parse(bytes)
        } catch {
            throw LoadError.malformed(path, error.description)
        }
        guard let start = root["startContent"]?.stringValue, let end = root["endContent"]?.stringValue,
              let txns = root["txns"]?.arrayValue
        else { throw LoadError.malformed(path, "expected startContent, endContent and txns") }
        var patches: [Patch] = []
        for txn in txns {
            guard let list = txn["patches"]?.arrayValue else { throw LoadError.malformed(path, "a transaction without patches") }
            for patch in list {
                guard let fields = patch.arrayValue, fields.count == 3,
                      let position = fields[0].integerValue, let remove = fields[1].integerValue,
                      let insert = fields[2].stringValue
                else { throw LoadError.malformed(path, "a patch is not [pos, delCount, insText]") }
                patches.append(Patch(position: Int(position), removeCount: Int(remove), insert: Array(insert.unicodeScalars)))
            }
        }
        // Name by the path below the traces folder: two variants may share a file name.
        let parts = URL(fileURLWithPath: path).pathComponents
        self.name = parts.suffix(parts.dropLast().last == "traces" ? 1 : 2).joined(separator: "/")
        self.startContent = start
        self.endContent = end
        self.patches = patches
    }

    private static func gunzip(_ path: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw LoadError.unreadable(path, "gzip: \(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw LoadError.unreadable(path, "gzip exited with \(process.terminationStatus)") }
        return [UInt8](data)
    }

    /// The directory of shared traces, found by walking up from `start` to a folder with `shared/traces`.
    public static func sharedTracesDirectory(from start: String = FileManager.default.currentDirectoryPath) -> String? {
        var url = URL(fileURLWithPath: start)
        for _ in 0..<6 {
            let candidate = url.appendingPathComponent("shared/traces").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            url.deleteLastPathComponent()
        }
        return nil
    }

    /// Every `.json.gz` trace under the shared traces directory, sorted by path.
    public static func sharedTracePaths(from start: String = FileManager.default.currentDirectoryPath) -> [String] {
        guard let directory = sharedTracesDirectory(from: start),
              let walker = FileManager.default.enumerator(atPath: directory)
        else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".json.gz") || $0.hasSuffix(".json") }
            .map { directory + "/" + $0 }.sorted()
    }
}
