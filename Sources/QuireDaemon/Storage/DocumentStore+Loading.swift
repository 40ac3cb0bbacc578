import ReplicatingTypes

/// Reading the data directory's documents back at start (`DocumentStore`).
extension DocumentStore {
    /// A document read back from disk.
    public struct LoadedDocument {
        public let uri: String
        public let id: UInt64
        public let text: ReplicatingText
        public let operationCount: Int
        let binding: FileBinding?
        /// Whether a peer ever held the document, and the peer daemons known to hold it.
        let shared: Bool
        let sharing: DocumentSharing
        /// The latest editor edits applied, by ID.
        let editIDs: RecentEditIDs
    }

    /// Every document in the data directory, each from its newest intact state. Damage is
    /// logged as a warning saying what was dropped; an unreadable document is logged and skipped.
    public func loadDocuments() -> [LoadedDocument] {
        loadDocuments(rebuildingViews: { _, _ in nil })
    }

    /// `loadDocuments()`, with `views(uri, id)` rebuilding the editor views of each document as
    /// its log is replayed. Documents that a pack holds and whose own files were not made (or
    /// not finished) are made from the pack first (`makeDocumentsOfPacks`).
    func loadDocuments(rebuildingViews views: (String, UInt64) -> ViewReplay?) -> [LoadedDocument] {
        removeUnfinishedDirectories()
        makeDocumentsOfPacks()
        let names: [String]
        do { names = try FileSystem.list(documentsPath).sorted() } catch {
            logger.error("cannot list \(documentsPath): \(error)")
            return []
        }
        var loaded: [LoadedDocument] = []
        for name in names where !name.hasSuffix(DocumentFiles.unfinishedSuffix) {
            let directory = documentsPath + "/" + name
            do {
                try OwnedFiles.checkDirectory(directory, what: "the document directory")
                let recovered = try DocumentFiles.recover(directory, replica: replica, views: views)
                recovered.files.minimumLogBytesBeforeSnapshot = snapshotLogBytes
                for warning in recovered.warnings { logger.warning("document \(recovered.files.uri): \(warning)") }
                files[recovered.files.id] = recovered.files
                loaded.append(LoadedDocument(uri: recovered.files.uri, id: recovered.files.id, text: recovered.text,
                                             operationCount: recovered.operationCount, binding: recovered.binding,
                                             shared: recovered.shared, sharing: recovered.sharing,
                                             editIDs: recovered.files.editIDs))
            } catch {
                logger.error("skipping \(directory): \(error)")
            }
        }
        return loaded
    }
}
