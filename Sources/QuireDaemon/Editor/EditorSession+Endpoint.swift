/// An editor session is what the core reaches an editor through (`EditorEndpoint`).
extension EditorSession: EditorEndpoint {}
