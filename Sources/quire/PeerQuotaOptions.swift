import ArgumentParser
import QuireDaemon

/// The quota flags of `quire` and `quire peer` (protocol/peer.md, *Bounds*): what the documents
/// of one project (or the documents shared by name) may hold together before a peer may add
/// more. The defaults are twice what `quire share` shares at most, so an honest project and its
/// history fit; lower them to hold a hostile member to less memory and disk.
struct PeerQuotaOptions: ParsableArguments {
    @Option(help: "Documents one project (or the documents shared by name) may hold before a peer may add more (default 50000).")
    var peerQuotaDocuments: Int?

    @Option(help: "Characters, removed ones included, one project's documents (or those shared by name) may hold together before a peer may add more (default 536870912).")
    var peerQuotaCharacters: Int?

    func configure(_ configuration: inout Daemon.Configuration) throws {
        if let peerQuotaDocuments {
            guard (1...1_000_000).contains(peerQuotaDocuments) else { throw ValidationError("--peer-quota-documents must be between 1 and 1000000") }
            configuration.maximumDocumentsPerScope = peerQuotaDocuments
            configuration.maximumDocumentsPerList = max(configuration.maximumDocumentsPerList, peerQuotaDocuments)
            configuration.maximumDocuments = max(configuration.maximumDocuments, peerQuotaDocuments)
        }
        if let peerQuotaCharacters {
            guard (1...(1 << 40)).contains(peerQuotaCharacters) else { throw ValidationError("--peer-quota-characters must be between 1 and 1099511627776") }
            configuration.maximumElementsPerScope = peerQuotaCharacters
        }
    }
}
