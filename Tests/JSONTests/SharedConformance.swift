import Foundation

/// Locates `shared/conformance` by walking up from this file, as the repository sits beside `shared/`.
enum SharedConformance {
    static let directory: String? = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<8 {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("shared/conformance").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// File names in `json/` (JSONTestSuite's test_parsing), sorted.
    static let jsonFileNames: [String] = {
        guard let directory else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/json")) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }()

    static func bytes(ofJSONFile name: String) throws -> [UInt8] {
        guard let directory, let data = FileManager.default.contents(atPath: directory + "/json/" + name) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return [UInt8](data)
    }
}
