import JSON

/// Reads and checks a project key parameter: 16 lowercase hex digits
/// (`DocumentScope.projectKey(secret:)`).
enum ProjectKeyParam {
    static func read(_ reader: ParamsReader, _ name: String = "key") throws(ResponseError) -> String {
        let key = try reader.string(name)
        guard key.utf8.count == 16, key.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw .invalidParams("params.\(name): a project key is 16 lowercase hex digits, got \(ResponseError.shownMethod(key))")
        }
        return key
    }

    /// A member as a person names it: a user name or a key fingerprint (or its start), at most
    /// 200 bytes, no control characters.
    static func member(_ reader: ParamsReader, _ name: String = "member") throws(ResponseError) -> String {
        let member = try reader.string(name)
        guard !member.isEmpty, member.utf8.count <= 200,
              !member.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidParams("params.\(name): a member is a name or a key fingerprint of 1 to 200 bytes with no control characters, got \(ResponseError.shownMethod(member))")
        }
        return member
    }

    /// `read`, `write` or `owner`.
    static func role(_ reader: ParamsReader, _ name: String = "role") throws(ResponseError) -> String {
        let role = try reader.string(name)
        guard ["read", "write", "owner"].contains(role) else {
            throw .invalidParams("params.\(name): a role is read, write or owner, got \(ResponseError.shownMethod(role))")
        }
        return role
    }
}
