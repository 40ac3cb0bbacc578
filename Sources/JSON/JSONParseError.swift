/// Why a byte buffer is not a JSON document we accept, with where jansson stopped.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// jansson's own explanation ("'[' or '{' expected near 'x'", "maximum parsing depth reached").
    public var message: String
    /// 1-based line and column, and 0-based byte offset, of the error (as jansson reports them).
    public var line: Int
    public var column: Int
    public var byteOffset: Int

    public init(message: String, line: Int, column: Int, byteOffset: Int) {
        self.message = message
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
    }

    public var description: String { "\(message) at line \(line), column \(column) (byte \(byteOffset))" }
}
