import Foundation
import JSON

/// `project/join` (editor -> daemon, request): joins the project a join line names
/// (protocol/decisions/join-line.md). `line`: what `quire share` printed (spaces, line breaks
/// and a leading `quire join` are fine); `directory`: an absolute folder to put the files in,
/// empty or not there yet (default: the project's name under the daemon's working folder). The
/// daemon connects to the line's addresses (or relay) with the project's secret, pinning the
/// host's key; files arrive on disk as their documents do (`project/progress`). `via`: a command
/// that reaches the host's machine (`ssh host`); the daemon then peers over `<via> quire peer
/// --stdio`, which on a machine where Quire runs reaches that daemon, instead of dialing the
/// line's addresses or relay.
public struct ProjectJoinRequest: EditorRequest, Equatable {
    public static let method = "project/join"
    /// Longer input is refused before it is parsed (as `JoinLine` does).
    public static let maximumLineBytes = 4 * 4400

    public var line: String
    public var directory: String?
    public var via: String?
    public static let maximumViaBytes = 1024

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        line = try reader.string("line")
        guard line.utf8.count <= Self.maximumLineBytes else {
            throw .invalidParams("params.line: a join line has at most \(Self.maximumLineBytes) bytes, got \(line.utf8.count)")
        }
        directory = try reader.optionalString("directory")
        via = try reader.optionalString("via")
        if let via {
            guard !via.trimmingCharacters(in: .whitespaces).isEmpty, via.utf8.count <= Self.maximumViaBytes,
                  !via.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalidParams("params.via: a command of 1 to \(Self.maximumViaBytes) bytes with no control characters, got \(ResponseError.shownMethod(via))")
            }
        }
        if let directory {
            guard directory.hasPrefix("/"), directory.utf8.count <= 4096,
                  !directory.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalidParams("params.directory: must be an absolute path of at most 4096 bytes with no control characters, got \(ResponseError.shownMethod(directory))")
            }
        }
    }

    /// `{key, name, directory, files}`: `files` the files known so far (0 until the host's tree arrives).
    public struct Result: MessageResult, Equatable {
        public var key: String
        public var name: String
        public var directory: String
        public var files: Int

        public init(key: String, name: String, directory: String, files: Int) {
            self.key = key
            self.name = name
            self.directory = directory
            self.files = files
        }

        public var json: JSONValue {
            ["key": .string(key), "name": .string(name), "directory": .string(directory), "files": .integer(Int64(files))]
        }
    }
}
