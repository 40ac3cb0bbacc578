/// The rule for a file path an editor sends (`document/open`'s `file`, `project/share`'s `root`).
///
/// A JSON string holds Unicode only, so an editor cannot send a path whose bytes are not UTF-8:
/// Vim's encoder replaces each such byte with U+FFFD, which names another file (`a\u{FFFD}.txt`,
/// which anyone who may write in the folder can make) than the one open (`a\xff.txt`). The daemon
/// cannot tell the two apart, so a path holding U+FFFD is refused, never opened (Quire names files
/// by UTF-8 paths; `quire share` refuses such arguments the same way). A path holding NUL is
/// refused too: the system would take the path as ending there.
public enum EditorPath {
    /// Why `path` is refused, nil when it may name a file.
    public static func problem(_ path: String) -> String? {
        if path.unicodeScalars.contains("\u{0}") {
            // JSON strings may hold NUL, file names never: the system would cut the path there.
            return "\(ResponseError.shownMethod(path)) holds NUL, which no file name holds: the system would open the path cut short there, another file"
        }
        guard path.unicodeScalars.contains("\u{FFFD}") else { return nil }
        return "\(ResponseError.shownMethod(path)) holds U+FFFD, the character editors put for bytes that are not UTF-8, "
            + "so it may name another file than the one open; Quire names files by UTF-8 paths: rename the file to open it through Quire"
    }
}
