import JSON

/// `project/list` (editor -> daemon, request, no params): the projects this daemon shares
/// (`host`) or joined (`joined`), each with its key, name, root folder, live file count and the
/// peer links of its scope that are up; a project of one file (a file shared by itself) also
/// names that file (`file`, absolute; `root` is its folder).
public struct ProjectListRequest: EditorRequest, Equatable {
    public static let method = "project/list"

    public init(params: JSONValue?) throws(ResponseError) {
        _ = try ParamsReader(params)
    }

    /// `{projects: [{key, name, root, role, files, links, file?}]}`, by key.
    public struct Result: MessageResult, Equatable {
        public var projects: [Entry]

        public init(projects: [Entry]) {
            self.projects = projects
        }

        public var json: JSONValue { ["projects": .array(projects.map(\.json))] }
    }

    public struct Entry: Sendable, Equatable {
        public var key: String
        public var name: String
        public var root: String
        public var role: String
        public var files: Int
        public var links: Int
        /// The one file of a project of one file (absolute), nil for a folder project.
        public var file: String?

        public init(key: String, name: String, root: String, role: String, files: Int, links: Int, file: String? = nil) {
            self.key = key
            self.name = name
            self.root = root
            self.role = role
            self.files = files
            self.links = links
            self.file = file
        }

        public var json: JSONValue {
            var fields: [String: JSONValue] = [
                "key": .string(key), "name": .string(name), "root": .string(root), "role": .string(role),
                "files": .integer(Int64(files)), "links": .integer(Int64(links)),
            ]
            if let file { fields["file"] = .string(file) }
            return .object(fields)
        }
    }
}
