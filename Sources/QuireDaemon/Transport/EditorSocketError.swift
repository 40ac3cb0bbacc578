/// Why the editor socket cannot be made, reached or cleaned up, in words for the person who
/// chose its path.
public struct EditorSocketError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
