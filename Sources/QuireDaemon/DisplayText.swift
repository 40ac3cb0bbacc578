/// Text from outside (a peer's user name, a close reason) made safe to log or show.
public enum DisplayText {
    /// A user name from a peer or an editor is cut to this many characters.
    public static let maximumNameLength = 64
    /// A reason for closing a link, ours or the peer's, is cut to this many characters.
    public static let maximumReasonLength = 400

    /// `text` as something safe to show: no control or format characters (which could move a
    /// terminal's cursor or reorder text), no white space at either end, at most `limit` characters.
    public static func clean(_ text: String, limit: Int = maximumNameLength) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where scalars.count < limit {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: continue
            default: scalars.append(scalar)
            }
        }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        return String(scalars)
    }
}
