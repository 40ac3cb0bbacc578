import Foundation

// Documents bound to a project's file by another path to it, made before the project was
// active: re-bound to the project's own path when it becomes active.
extension ProjectService {
    /// Binds to the project's own path (root and project path) every document bound to a file
    /// of `project` by another path to it: opened through a link to the root or with `..` before
    /// the folder was shared (`editorPath(ofFile:)` names such a path the project's own only
    /// while the project is active), or bound so in an earlier run. Its saves then go through the
    /// project's walk from the opened root (`save(_:boundTo:)`), its reads too, and the writer
    /// holds its buffer as an open file of the project (`pathsOpenOutsideTheProject`). The file
    /// and the binding's base, hash and format are unchanged: only the name it is reached by.
    func rebindAliases(into project: SharedProject) {
        for document in parts.documents.documents.values {
            guard let path = document.file?.path else { continue }
            if let relative = project.projectPath(ofAbsolute: path), project.absolute(relative) == path { continue }
            let folder = (path as NSString).deletingLastPathComponent
            guard let resolved = realpath(folder, nil) else { continue }
            // A resolved folder that is not UTF-8 would read with U+FFFD: another folder's name.
            let folderText = String(validatingCString: resolved)
            free(resolved)
            guard let folderText, let relative = project.projectPath(ofAbsolute: folderText + "/" + (path as NSString).lastPathComponent) else { continue }
            let own = project.absolute(relative)
            guard own != path else { continue }
            parts.files.rename(document, toPath: own)
            logger.info("project \(project.key): document \(document.uri), bound to \(DisplayText.clean(path, limit: 200)), is bound to the project's \(DisplayText.clean(relative.string, limit: 200))")
        }
    }
}
