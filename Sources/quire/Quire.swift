import ArgumentParser
import ReplicatingTypes

/// The `quire` command line: for now it reports its version; the daemon arrives with the protocol.
@main
struct Quire: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "quire",
        abstract: "Collaborative text-editing daemon: editors attach over stdio, daemons sync as peers.",
        discussion: "The JSON-RPC daemon is not built yet; this build carries the CRDT library (ReplicatingTypes).",
        version: version
    )

    func run() throws {
        print("quire \(Self.version) (ReplicatingTypes \(ReplicatingTypesInfo.formatVersion))")
    }
}
