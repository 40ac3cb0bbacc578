/// The rule for document names, the same for names an editor opens and names a peer sends:
/// not empty, at most `maximumBytes` bytes of UTF-8, and no character that could move a
/// terminal's cursor or reorder what is shown (control characters, C1 controls such as U+009B
/// included, format characters such as bidirectional overrides, line and paragraph separators,
/// surrogates, private-use and unassigned code points).
///
/// Guarantees: a name that passes can be logged, shown in `window/showMessage` and stored as it
/// is; `displayed` makes anything else safe to show, cut to a given length.
public enum DocumentName {
    /// Longest name, in bytes of UTF-8.
    public static let maximumBytes = 1024

    /// Why `name` is not a document name, or nil when it is.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "a document name must not be empty" }
        let bytes = name.utf8.count
        if bytes > maximumBytes { return "a document name of \(bytes) bytes exceeds the limit of \(maximumBytes)" }
        if name.unicodeScalars.contains(where: isUnsafe) { return "a document name holds control or format characters" }
        return nil
    }

    /// Whether `scalar` must not reach a log, a terminal or an editor's message area as it is.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII's only unsafe characters are its controls (no table lookup for the common case).
        if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }

    /// `text` without unsafe characters and surrounding white space, at most `limit` characters
    /// (Unicode scalars), "…" marking a cut: for logs and messages about a name that was refused.
    public static func displayed(_ text: String, limit: Int = 64) -> String {
        var scalars = String.UnicodeScalarView()
        var cut = false
        for scalar in text.unicodeScalars where !isUnsafe(scalar) {
            guard scalars.count < limit else { cut = true; break }
            scalars.append(scalar)
        }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        return String(scalars) + (cut ? "…" : "")
    }
}
