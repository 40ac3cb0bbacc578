import Foundation
import JSON
import QuireDaemon

/// What holding project secrets costs an accepting daemon (protocol/peer.md, *Handshake*,
/// *Several secrets*): the time of one whole in-process handshake (hellos, proofs, auths, first
/// document lists, both sides' cryptography) when the accepting side holds 1 secret and when it
/// holds 65 (the general one and the most project secrets a daemon holds, 64), with the
/// connector's secret last in its order (the worst case; every candidate is tried anyway).
struct HandshakeBenchmark {
    struct Result {
        var oneSecret = 0.0
        var manySecrets = 0.0
        var secrets = 0
    }

    func run(repetitions: Int) throws -> Result {
        var result = Result()
        result.oneSecret = try perHandshake(projectSecrets: 0, repetitions: repetitions)
        result.manySecrets = try perHandshake(projectSecrets: 64, repetitions: repetitions)
        result.secrets = 65
        return result
    }

    /// Median seconds per handshake, over batches of 50, with an acceptor that holds the general
    /// secret and `projectSecrets` project secrets; the connector proves the last project's
    /// (or the general one when there are none).
    private func perHandshake(projectSecrets: Int, repetitions: Int) throws -> Double {
        let acceptor = PeerBenchmark.daemon(100)
        var projects: [[UInt8]] = []
        for _ in 0..<projectSecrets {
            let secret = try PeerSecret.material(from: PeerSecret.generate())
            try acceptor.addPeerSecret(secret, scope: .project(key: DocumentScope.projectKey(secret: secret)))
            projects.append(secret)
        }
        // The candidates are tried general first, then by key: the largest key comes last.
        let last = projects.max { DocumentScope.projectKey(secret: $0) < DocumentScope.projectKey(secret: $1) }
        let scope = last.map { DocumentScope.project(key: DocumentScope.projectKey(secret: $0)) } ?? .general
        let connector = PeerBenchmark.daemon(200)
        if let last { try connector.addPeerSecret(last, scope: scope) }
        let batch = 50
        var failure: Error?
        let seconds = Measure.median(repetitions) {
            do {
                for _ in 0..<batch { try handshake(connector, acceptor, scope: scope) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return seconds / Double(batch)
    }

    private func handshake(_ connector: Daemon, _ acceptor: Daemon, scope: DocumentScope) throws {
        final class Queues { var toAcceptor: [[UInt8]] = []; var toConnector: [[UInt8]] = [] }
        let q = Queues()
        let dialing = try connector.makePeerLink(write: { q.toAcceptor.append($0) }, close: {}, incoming: false, scope: scope)
        let accepting = try acceptor.makePeerLink(write: { q.toConnector.append($0) }, close: {})
        dialing.start()
        accepting.start()
        while !q.toAcceptor.isEmpty || !q.toConnector.isEmpty {
            if !q.toAcceptor.isEmpty { accepting.receive(q.toAcceptor.removeFirst()) }
            if !q.toConnector.isEmpty { dialing.receive(q.toConnector.removeFirst()) }
        }
        guard accepting.state == .established, dialing.state == .established else {
            throw BenchError("handshake did not complete: \(accepting.closeReason ?? dialing.closeReason ?? "?")")
        }
        accepting.close("done")
        dialing.close("done")
    }
}

extension QuireBench {
    /// Prints the handshake figures (`--only handshake`).
    func runHandshakeBenchmark() throws {
        let r = try HandshakeBenchmark().run(repetitions: repetitions)
        if json {
            print(JSONSerializer(sortedKeys: true).string([
                "handshake": "in-process", "oneSecretMicroseconds": .double(r.oneSecret * 1e6),
                "secrets": .integer(Int64(r.secrets)), "manySecretsMicroseconds": .double(r.manySecrets * 1e6),
            ]))
        } else {
            print(String(format: "peer handshake (in process, both sides): %.0f us with 1 secret, %.0f us when the accepting side holds %d",
                         r.oneSecret * 1e6, r.manySecrets * 1e6, r.secrets))
        }
    }
}
