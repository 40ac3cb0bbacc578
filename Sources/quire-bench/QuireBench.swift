import ArgumentParser
import EditingTraces
import Foundation
import JSON
import ReplicatingTypes

/// `quire-bench`: replays editing traces and prints the figures of DESIGN.md section 6.
@main
struct QuireBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quire-bench",
        abstract: "Replay editing traces into ReplicatingArray and print speed, memory and size figures.")

    @Argument(help: "Trace files (.json or .json.gz, editing-traces format). Default: every trace in ../shared/traces, plus a 3 MB document benchmark.")
    var traces: [String] = []

    @Option(help: "Repetitions per measurement (the median is reported).")
    var repetitions = 5

    @Option(help: "Run only these parts: traces, code, document, daemon, stdio, peers, relay, storage, checks, project, share, scan, handshake, typing (comma-separated). Default: all.")
    var only: String?

    @Option(help: "The quire binary for the stdio benchmark. Default: the one built next to quire-bench.")
    var quire: String?

    @Option(help: "Project sizes (files) for --only project, comma-separated.")
    var projectSizes = "500,2000,8000"

    @Option(help: "Parts of --only project: fresh, durable, one-read, memory, process (the real quire on pipes) (comma-separated). Default: all but process.")
    var projectParts = "fresh,durable,one-read,memory"

    @Flag(help: "Leave --only project's data directories in TMPDIR (remove them yourself): back-to-back runs then do not make inodes among those the last run freed.")
    var keepData = false

    @Option(help: "Project sizes (files) for --only share, comma-separated.")
    var shareSizes = "500,2000"

    @Option(help: "Project sizes (files) for --only typing, comma-separated.")
    var typingSizes = "500,2000,8000"

    @Option(help: "Keystrokes typed per pass of --only typing.")
    var typingKeystrokes = 2_000

    @Option(help: "Seconds each daemon's idle CPU is measured before each pass of --only typing.")
    var typingIdleSeconds = 4.0

    @Flag(help: "With --only share: after each join, write the same tree by itself, syncing each file before its rename (syncfs per 64 files, then fsync per file), and print both: the floor of the join on this disk.")
    var shareFloor = false

    @Flag(help: "Print one JSON object per trace.")
    var json = false

    @Flag(help: "Also run ../shared/bench/anchors.py (Loro, Yrs) on each trace in this run and print the ratios.")
    var anchors = false

    @Option(help: ArgumentHelp("Only replay locally this many times (for profilers); print nothing else.", visibility: .hidden))
    var profileLocal: Int?

    @Option(help: ArgumentHelp("Only apply a local replay's operations to a new array this many times (for profilers).", visibility: .hidden))
    var profileRemote: Int?

    @Option(help: ArgumentHelp("Only run one part of a code-shaped history this many times (for profilers): KIND:SCALE:PART, PART local or catch-up (the second half missed).", visibility: .hidden))
    var profileCode: String?

    func run() throws {
        // A daemon the benchmark drives may end before it reads everything sent to it: that is an
        // error to report (EPIPE), not a reason for the benchmark to die without printing.
        signal(SIGPIPE, SIG_IGN)
        let paths = traces.isEmpty ? EditingTrace.sharedTracePaths() : traces
        if let times = profileLocal {
            for path in paths {
                let trace = try EditingTrace(contentsOf: path)
                // Arrays kept until the end and operations collected in one reused buffer, as in
                // the timed replay, so neither freeing nor fresh pages are profiled.
                var replayed: [ReplicatingArray<Unicode.Scalar>] = []
                var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
                operations.reserveCapacity(TraceBenchmark.maxOperations(trace.patches.count))
                for _ in 0..<times {
                    var array = TraceBenchmark.makeArray(1)
                    operations.removeAll(keepingCapacity: true)
                    TraceBenchmark.replay(trace.patches[...], into: &array, operations: &operations)
                    replayed.append(array)
                }
                withExtendedLifetime(replayed) { Foundation.exit(0) }
            }
            return
        }
        if let spec = profileCode {
            try profileCodeTrace(spec)
            return
        }
        if let times = profileRemote {
            for path in paths {
                let trace = try EditingTrace(contentsOf: path)
                var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
                var array = TraceBenchmark.makeArray(1)
                TraceBenchmark.replay(trace.patches[...], into: &array, operations: &operations)
                var replayed: [ReplicatingArray<Unicode.Scalar>] = []
                for _ in 0..<times {
                    var remote = TraceBenchmark.makeArray(2)
                    TraceBenchmark.integrate(operations, into: &remote)
                    replayed.append(remote)
                }
                withExtendedLifetime(replayed) { Foundation.exit(0) }
            }
            return
        }
        guard !paths.isEmpty else { throw ValidationError("no trace given and none found under ../shared/traces") }
        let parts = Set((only ?? "traces,code,document,daemon,stdio,peers,relay,storage,checks,project,share,scan,handshake,typing").split(separator: ",").map(String.init))
        if traces.isEmpty && parts.contains("document") { runDocumentBenchmark() }
        if traces.isEmpty && parts.contains("daemon") { runDaemonBenchmark() }
        if traces.isEmpty && parts.contains("stdio") { try runStdioBenchmark() }
        if traces.isEmpty && parts.contains("peers") { try runPeerBenchmark() }
        if traces.isEmpty && parts.contains("handshake") { try runHandshakeBenchmark() }
        if traces.isEmpty && parts.contains("relay") { try runRelayBenchmark(json: json) }
        if traces.isEmpty && parts.contains("storage") { try runStorageBenchmark(paths) }
        if traces.isEmpty && parts.contains("checks") { try runChecksBenchmark(paths) }
        if traces.isEmpty && parts.contains("project") { try runProjectBenchmark() }
        if traces.isEmpty && parts.contains("share") { try runShareBenchmark() }
        if traces.isEmpty && parts.contains("scan") { try runScanBenchmark() }
        if traces.isEmpty && parts.contains("typing") { try runTypingBenchmark() }
        if traces.isEmpty && parts.contains("code") { runCodeBenchmark() }
        for path in paths where parts.contains("traces") {
            let trace = try EditingTrace(contentsOf: path)
            let r = TraceBenchmark(trace: trace, repetitions: repetitions).run()
            let anchor = anchors ? Anchors.measure(tracePath: path, repetitions: 3) : [:]
            let edits = trace.patches.count
            let bytesPerChar = Double(r.heapBytes) / Double(Swift.max(r.liveCharacters, 1))
            var row: [String: JSONValue] = [
                "trace": .string(trace.name), "edits": .integer(Int64(edits)),
                "seconds": .double(r.localSeconds), "editsPerSecond": .double(Double(edits) / r.localSeconds),
                "peakMemoryBytes": .integer(Int64(Measure.peakResidentBytes())),
                "heapBytes": .integer(Int64(r.heapBytes)), "bytesPerLiveChar": .double(bytesPerChar),
                "finalTextMatches": .bool(r.finalTextMatches), "liveChars": .integer(Int64(r.liveCharacters)),
                "runs": .integer(Int64(r.runs)), "storage": .string(r.statistics),
                "secondsWithFreshOperationBuffer": .double(r.localFreshBufferSeconds),
                "floorGapBufferSeconds": .double(r.floorSeconds), "ratioToFloor": .double(r.localSeconds / r.floorSeconds),
                "remoteSeconds": .double(r.remoteSeconds), "remoteMatches": .bool(r.remoteMatches),
                "remoteToLocalRatio": .double(r.remoteSeconds / r.localSeconds),
                "remoteReportingChangesSeconds": .double(r.remoteReportingSeconds),
                "mergeHalvesSeconds": .double(r.mergeSeconds),
                "averageKeystrokeOpBytes": .double(r.averageKeystrokeBytes),
                "encodedStateBytes": .integer(Int64(r.encodedStateBytes)), "decodeStateSeconds": .double(r.decodeSeconds),
                "compactedBytesPerLiveChar": .double(Double(r.compactedHeapBytes) / Double(Swift.max(r.liveCharacters, 1))),
                "compactedStateBytes": .integer(Int64(r.compactedStateBytes)), "droppedTombstones": .integer(Int64(r.droppedTombstones)),
                "compactionSeconds": .double(r.compactionSeconds),
            ]
            for (mode, seconds) in anchor {
                row["anchor:\(mode)"] = .double(seconds)
                row["speedupOver:\(mode)"] = .double(seconds / r.localSeconds)
            }
            if json {
                print(JSONSerializer(sortedKeys: true).string(.object(row)))
            } else {
                print("""
                \(trace.name): \(edits) edits, final text \(r.finalTextMatches ? "matches" : "DIFFERS")
                  local replay     \(ms(r.localSeconds))  \(Int(Double(edits) / r.localSeconds)) edits/s  (\(fmt(r.localSeconds / r.floorSeconds))x the gap-buffer floor of \(ms(r.floorSeconds)))
                                   \(ms(r.localFreshBufferSeconds)) with a new operations buffer each time (\(fmt(r.localFreshBufferSeconds / r.floorSeconds))x; the kernel clears its new pages)
                  remote replay    \(ms(r.remoteSeconds))  (\(fmt(r.remoteSeconds / r.localSeconds))x local; \(r.remoteMatches ? "same state" : "STATE DIFFERS"))
                  remote, changes  \(ms(r.remoteReportingSeconds))  (\(fmt(r.remoteReportingSeconds / r.localSeconds))x local; each operation's visible changes worked out, as editors need)
                  merge of halves  \(ms(r.mergeSeconds))
                  memory           \(fmt(bytesPerChar)) bytes per live char (\(r.heapBytes) heap bytes, \(r.liveCharacters) chars, \(r.runs) runs); peak RSS \(Measure.peakResidentBytes() / 1_048_576) MiB
                  storage          \(r.statistics)
                  wire             \(fmt(r.averageKeystrokeBytes)) bytes per keystroke op; final state \(r.encodedStateBytes / 1024) KiB, decoded in \(ms(r.decodeSeconds))
                  tombstones gone  \(fmt(Double(r.compactedHeapBytes) / Double(Swift.max(r.liveCharacters, 1)))) bytes per live char, state \(r.compactedStateBytes / 1024) KiB (\(r.droppedTombstones) removed characters dropped in \(ms(r.compactionSeconds)))
                """)
                for (mode, seconds) in anchor.sorted(by: { $0.key < $1.key }) {
                    print("  \(mode.padding(toLength: 18, withPad: " ", startingAt: 0)) \(ms(seconds))  (Quire local replay is \(fmt(seconds / r.localSeconds))x faster)")
                }
            }
        }
    }

    /// The generated code-shaped histories at 1x, 4x and 16x their base length.
    /// `--profile-code KIND:SCALE:PART:TIMES`: one part of a code-shaped history, nothing printed.
    private func profileCodeTrace(_ spec: String) throws {
        let fields = spec.split(separator: ":").map(String.init)
        guard fields.count == 4, let kind = CodeTraces.Kind(rawValue: fields[0]), let scale = Int(fields[1]), let times = Int(fields[3]),
              fields[2] == "local" || fields[2] == "catch-up" else {
            throw ValidationError("--profile-code takes KIND:SCALE:PART:TIMES, KIND code-writing or code-refactoring, PART local or catch-up")
        }
        let trace = CodeTraces.make(kind, scale: scale).0
        if fields[2] == "local" {
            var replayed: [ReplicatingArray<Unicode.Scalar>] = []
            var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            operations.reserveCapacity(TraceBenchmark.maxOperations(trace.patches.count))
            for _ in 0..<times {
                var array = TraceBenchmark.makeArray(1)
                operations.removeAll(keepingCapacity: true)
                TraceBenchmark.replay(trace.patches[...], into: &array, operations: &operations)
                replayed.append(array)
            }
            withExtendedLifetime(replayed) { Foundation.exit(0) }
        }
        CatchUpBenchmark(trace: trace, repetitions: times).profileSecondHalf()
    }

    private func runCodeBenchmark() {
        if !json { print("code-shaped histories (generated, deterministic; \(CodeTraces.baseEdits) edits at 1x):") }
        for kind in CodeTraces.Kind.allCases {
            for scale in [1, 4, 16] {
                let (trace, shape) = CodeTraces.make(kind, scale: scale)
                let r = TraceBenchmark(trace: trace, repetitions: repetitions).run()
                let c = CatchUpBenchmark(trace: trace, repetitions: repetitions).run()
                let live = Swift.max(r.liveCharacters, 1)
                let perChar = Double(r.heapBytes) / Double(live)
                if json {
                    print(JSONSerializer(sortedKeys: true).string([
                        "trace": .string(trace.name), "edits": .integer(Int64(shape.edits)), "paragraphs": .integer(Int64(shape.paragraphs)),
                        "meanLineLength": .double(shape.meanLineLength), "largestDeletion": .integer(Int64(shape.largestDeletion)),
                        "removedCharacters": .integer(Int64(shape.removedCharacters)), "liveChars": .integer(Int64(r.liveCharacters)),
                        "seconds": .double(r.localSeconds), "floorGapBufferSeconds": .double(r.floorSeconds),
                        "ratioToFloor": .double(r.localSeconds / r.floorSeconds), "remoteToLocalRatio": .double(r.remoteSeconds / r.localSeconds),
                        "bytesPerLiveChar": .double(perChar), "compactedBytesPerLiveChar": .double(Double(r.compactedHeapBytes) / Double(live)),
                        "finalTextMatches": .bool(r.finalTextMatches), "remoteMatches": .bool(r.remoteMatches), "storage": .string(r.statistics), "compactedStorage": .string(r.compactedStatistics),
                        "catchUpFromNothingSeconds": .double(c.fromNothingSeconds), "catchUpFromNothingToLocalRatio": .double(c.fromNothingSeconds / c.wholeLocalSeconds),
                        "catchUpFromNothingBytes": .integer(Int64(c.fromNothingBytes)), "catchUpSecondHalfSeconds": .double(c.secondHalfSeconds),
                        "catchUpSecondHalfToLocalRatio": .double(c.secondHalfSeconds / c.secondHalfLocalSeconds),
                        "catchUpSecondHalfBytes": .integer(Int64(c.secondHalfBytes)), "catchUpMatches": .bool(c.matches),
                    ]))
                } else {
                    print("""
                      \(trace.name): \(shape.edits) edits, \(shape.paragraphs) paragraphs, mean line \(fmt(shape.meanLineLength)) chars, largest deletion \(shape.largestDeletion) (\(shape.removedCharacters) removed in all); final text \(r.finalTextMatches ? "matches" : "DIFFERS")
                        local replay   \(ms(r.localSeconds)), \(String(format: "%.0f", r.localSeconds / Double(shape.edits) * 1e9)) ns/edit (\(fmt(r.localSeconds / r.floorSeconds))x the gap-buffer floor of \(ms(r.floorSeconds)))
                        remote replay  \(ms(r.remoteSeconds)) (\(fmt(r.remoteSeconds / r.localSeconds))x local; \(r.remoteMatches ? "same state" : "STATE DIFFERS")); reporting changes \(fmt(r.remoteReportingSeconds / r.localSeconds))x
                        catch-up       from nothing \(ms(c.fromNothingSeconds)) (\(fmt(c.fromNothingSeconds / c.wholeLocalSeconds))x the local replay of \(ms(c.wholeLocalSeconds)), \(c.fromNothingBytes / 1024) KiB); the second half missed \(ms(c.secondHalfSeconds)) (\(fmt(c.secondHalfSeconds / c.secondHalfLocalSeconds))x its local replay of \(ms(c.secondHalfLocalSeconds)), \(c.secondHalfBytes / 1024) KiB); \(c.matches ? "same text" : "TEXT DIFFERS")
                        memory         \(fmt(perChar)) bytes per live char (\(r.liveCharacters) chars; \(r.statistics)); tombstones dropped: \(fmt(Double(r.compactedHeapBytes) / Double(live))) (\(r.compactedStatistics))
                    """)
                }
            }
        }
    }

    private func runChecksBenchmark(_ paths: [String]) throws {
        guard let path = paths.first(where: { $0.contains("automerge-paper") }) else {
            throw ValidationError("the checks benchmark replays automerge-paper, which is not under ../shared/traces")
        }
        let trace = try EditingTrace(contentsOf: path)
        // Each run is short and the two alternate: more of them steady the difference.
        let r = ChecksBenchmark(trace: trace, repetitions: max(repetitions, 11)).run()
        func cost(_ without: Double, _ with: Double, per count: Int) -> String {
            let share = without > 0 ? (with / without - 1) * 100 : 0
            return "\(ms(without)) without, \(ms(with)) with (\(String(format: "%+.1f", share))%, \(String(format: "%.0f", (with - without) / Double(max(count, 1)) * 1e9)) ns per frame)"
        }
        if json {
            print(JSONSerializer(sortedKeys: true).string([
                "checks": .string(trace.name), "operations": .integer(Int64(r.operations)), "refused": .integer(Int64(r.refused)),
                "liveSecondsWithout": .double(r.liveWithout), "liveSecondsWith": .double(r.liveWith),
                "framedSecondsWith": .double(r.framedWith), "frames": .integer(Int64(r.frames)),
                "catchUpOperations": .integer(Int64(r.catchUpOperations)), "catchUpFrames": .integer(Int64(r.catchUpFrames)),
                "catchUpSecondsWithout": .double(r.catchUpWithout), "catchUpSecondsWith": .double(r.catchUpWith),
                "replicas": .integer(Int64(r.replicas)), "replicaOperations": .integer(Int64(r.replicaOperations)),
                "replicasSecondsWithout": .double(r.replicasWithout), "replicasSecondsWith": .double(r.replicasWith),
                "localSecondsWithout": .double(r.localWithout), "localSecondsWith": .double(r.localWith),
            ]))
        } else {
            print("""
            bound checks (\(trace.name), \(r.operations) operations applied as a peer's; growth(from:) and PeerBounds per frame; median of \(max(repetitions, 11)), alternating)\(r.refused > 0 ? " REFUSED \(r.refused)" : ""):
              remote replay, 1 operation per frame    \(cost(r.liveWithout, r.liveWith, per: r.operations))
              remote replay, 10,000 per frame         \(cost(r.framedWithout, r.framedWith, per: r.frames)) (\(r.frames) frames)
              catch-up from nothing                   \(cost(r.catchUpWithout, r.catchUpWith, per: r.catchUpFrames)) (\(r.catchUpOperations) operations, \(r.catchUpFrames) frames)
              1 per frame, \(r.replicas) replicas named     \(cost(r.replicasWithout, r.replicasWith, per: r.replicaOperations)) (first \(r.replicaOperations) operations)
              local replay, element bound per edit    \(ms(r.localWithout)) without, \(ms(r.localWith)) with (\(String(format: "%+.1f", (r.localWith / max(r.localWithout, 1e-9) - 1) * 100))%)
            """)
        }
    }

    /// Scanning `.build/checkouts` as `quire share` would, reading its texts, building its tree.
    private func runScanBenchmark() throws {
        let root = FileManager.default.currentDirectoryPath + "/.build/checkouts"
        let r = try ScanBenchmark(root: root, repetitions: repetitions).run()
        let files = Double(Swift.max(r.files, 1)), mb = Double(Swift.max(r.bytes, 1)) / 1_048_576
        if json {
            print(JSONSerializer(sortedKeys: true).string([
                "scan": .string(r.root), "files": .integer(Int64(r.files)), "bytes": .integer(Int64(r.bytes)),
                "leftOut": .integer(Int64(r.leftOut)), "ignored": .integer(Int64(r.ignored)),
                "scanSeconds": .double(r.scanSeconds), "readSeconds": .double(r.readSeconds),
                "treeSeconds": .double(r.treeSeconds), "viewSeconds": .double(r.viewSeconds),
                "treeHeapBytes": .integer(Int64(r.treeHeapBytes)), "operationBytes": .integer(Int64(r.operationBytes)),
            ]))
            return
        }
        print("""
        sharing a folder (\(r.root)): \(r.files) text files, \(fmt(mb)) MB; \(r.leftOut) left out, \(r.ignored) ignored
          scan        \(ms(r.scanSeconds))  (\(fmt(r.scanSeconds * 1e6 / files)) µs per file)
          read texts  \(ms(r.readSeconds))  (\(fmt(r.readSeconds * 1e6 / files)) µs per file, \(fmt(r.readSeconds * 1000 / mb)) ms per MB)
          tree        \(ms(r.treeSeconds))  to create every path; view \(ms(r.viewSeconds)); \(fmt(Double(r.treeHeapBytes) / files)) heap bytes per file; \(fmt(Double(r.operationBytes) / files)) bytes per file as binary tree operations
        """)
    }

    private func runProjectBenchmark() throws {
        var benchmark = ProjectBenchmark(sizes: projectSizes.split(separator: ",").compactMap { Int($0) })
        benchmark.parts = Set(projectParts.split(separator: ",").map(String.init))
        benchmark.keepData = keepData
        let r = try benchmark.run()
        var processRuns: [ProjectProcessBenchmark.Result] = []
        if benchmark.parts.contains("process") {
            let files = ProjectBenchmark.projectFiles().files
            for n in benchmark.sizes {
                processRuns.append(try ProjectProcessBenchmark(binary: try quireBinary(), count: n, keepData: keepData).run(files))
            }
        }
        if json {
            for f in r.fresh {
                print(JSONSerializer(sortedKeys: true).string([
                    "fresh": .string(f.name), "characters": .integer(Int64(f.characters)), "utf8Bytes": .integer(Int64(f.utf8Bytes)),
                    "heapBytes": .integer(Int64(f.heapBytes)), "logBytes": .integer(Int64(f.logBytes)), "snapshotBytes": .integer(Int64(f.snapshotBytes)),
                ]))
            }
            for p in r.projects {
                print(JSONSerializer(sortedKeys: true).string([
                    "project": .string(p.mode), "files": .integer(Int64(p.files)), "characters": .integer(Int64(p.characters)),
                    "seconds": .double(p.seconds), "reads": .integer(Int64(p.reads)), "heapBytes": .integer(Int64(p.heapBytes)),
                    "residentBytes": .integer(Int64(p.residentBytes)), "diskBytes": .integer(Int64(p.diskBytes)),
                    "ownFilesSeconds": .double(p.ownFilesSeconds), "restartSeconds": .double(p.restartSeconds), "restartHeapBytes": .integer(Int64(p.restartHeapBytes)),
                ]))
            }
            for p in processRuns {
                print(JSONSerializer(sortedKeys: true).string([
                    "project": "process, stdio pipes", "files": .integer(Int64(p.files)), "utf8Bytes": .integer(Int64(p.utf8Bytes)),
                    "seconds": .double(p.seconds), "residentBytes": .integer(Int64(p.residentBytes)), "writtenBytes": .integer(Int64(p.writtenBytes)),
                    "daemonCPUSeconds": .double(p.cpuSeconds),
                ]))
            }
            return
        }
        print("fresh text (documents made from text, not edited; project: \(r.source)):")
        for f in r.fresh {
            let chars = Double(Swift.max(f.characters, 1)), utf8 = Double(Swift.max(f.utf8Bytes, 1))
            print("""
              \(f.name): \(f.characters) chars, \(f.utf8Bytes) UTF-8 bytes
                memory  \(fmt(Double(f.heapBytes) / chars)) bytes per char (\(f.statistics))
                disk    \(fmt(Double(f.logBytes) / utf8))x the text as created (log records and document.json); a snapshot would be \(fmt(Double(f.snapshotBytes) / utf8))x
            """)
        }
        print("project opened through document/open by one editor (in process):")
        for p in r.projects {
            let restart = p.restartedDocuments > 0
                ? "; every document in its own files after \(ms(p.ownFilesSeconds)); restart loads \(p.restartedDocuments) documents in \(ms(p.restartSeconds)), \(p.restartHeapBytes / 1_048_576) MiB heap" : ""
            print("  \(String(p.files).padding(toLength: 5, withPad: " ", startingAt: 0)) files, \(p.mode.padding(toLength: 22, withPad: " ", startingAt: 0)) \(ms(p.seconds)) (\(p.reads) reads, \(String(format: "%.1f", Double(p.utf8Bytes) / 1e6)) MB); heap +\(p.heapBytes / 1_048_576) MiB (\(fmt(Double(p.heapBytes) / Double(Swift.max(p.characters, 1)))) B/char), process resident \(p.residentBytes / 1_048_576) MiB, disk \(p.diskBytes / 1_048_576) MiB (\(fmt(Double(p.diskBytes) / Double(Swift.max(p.utf8Bytes, 1))))x)\(restart)")
        }
        if !processRuns.isEmpty { print("project opened through document/open by an editor on the real quire's stdio pipes (--durability sync):") }
        for p in processRuns {
            print("  \(String(p.files).padding(toLength: 5, withPad: " ", startingAt: 0)) files, \(String(format: "%.1f", Double(p.utf8Bytes) / 1e6)) MB  \(ms(p.seconds)) to the last reply, daemon CPU \(ms(p.cpuSeconds)); daemon resident \(p.residentBytes / 1_048_576) MiB, wrote \(p.writtenBytes / 1_048_576) MiB (/proc io)")
        }
    }

    private func runDocumentBenchmark() {
        let d = DocumentBenchmark(repetitions: repetitions).run()
        if json {
            let row: [String: JSONValue] = [
                "document": .string("war-and-peace-sized"), "bytes": .integer(Int64(d.bytes)), "lines": .integer(Int64(d.lines)),
                "openSeconds": .double(d.openSeconds), "keystrokeSeconds": .double(d.keystrokeSeconds),
                "positionLookupSeconds": .double(d.lookupSeconds), "oneLineDiffSeconds": .double(d.diffSeconds),
                "oneLineDiffEdits": .integer(Int64(d.diffEdits)),
            ]
            print(JSONSerializer(sortedKeys: true).string(.object(row)))
        } else {
            print("""
            \(String(format: "%.1f", Double(d.bytes) / 1e6)) MB document, \(d.lines) lines:
              open              \(ms(d.openSeconds))
              keystroke         \(String(format: "%8.1f µs", d.keystrokeSeconds * 1e6)) (UTF-16 position lookup + insertion in the middle)
              position lookup   \(String(format: "%8.1f µs", d.lookupSeconds * 1e6))
              one-line diff     \(ms(d.diffSeconds)) for the whole text resent with one line changed (\(d.diffEdits) edit)
            """)
        }
    }

    func quireBinary() throws -> String {
        let sibling = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("quire").path
        let binary = quire ?? sibling
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("no quire binary at \(binary): build it (swift build -c release) or pass --quire")
        }
        return binary
    }

    private func runPeerBenchmark() throws {
        let r = try PeerBenchmark(binary: try quireBinary()).run()
        let l = r.latency
        if json {
            print(JSONSerializer(sortedKeys: true).string([
                "peers": "loopback-tcp", "keystrokes": .integer(Int64(l.keystrokes)),
                "typingP50Milliseconds": .double(l.typingP50), "typingP99Milliseconds": .double(l.typingP99),
                "burstP50Milliseconds": .double(l.burstP50), "burstP99Milliseconds": .double(l.burstP99),
                "catchUpEdits": .integer(Int64(r.catchUpEdits)), "catchUpSeconds": .double(r.catchUpSeconds), "catchUpBytes": .integer(Int64(r.catchUpBytes)),
                "bulkDocumentBytes": .integer(Int64(r.bulkBytes)), "bulkSyncSeconds": .double(r.bulkSeconds), "bulkWireBytes": .integer(Int64(r.bulkWireBytes)),
            ]))
        } else {
            print("""
            peers (two real daemons on loopback TCP, an editor on each):
              keystroke latency  typing p50 \(fmt(l.typingP50)) ms, p99 \(fmt(l.typingP99)) ms; burst of \(l.keystrokes) p50 \(fmt(l.burstP50)) ms, p99 \(fmt(l.burstP99)) ms
              catch-up           \(r.catchUpEdits) missed edits in \(ms(r.catchUpSeconds)), \(r.catchUpBytes) bytes (in process)
              initial sync       \(String(format: "%.1f", Double(r.bulkBytes) / 1e6)) MB document in \(ms(r.bulkSeconds)), \(r.bulkWireBytes) bytes on the wire (in process)
            """)
        }
    }

    private func runStdioBenchmark() throws {
        let binary = try quireBinary()
        let r = try StdioBenchmark(binary: binary, edits: 100_000).run()
        if json {
            print(JSONSerializer(sortedKeys: true).string(["stdio": .string(binary), "edits": 100_000, "replies": .integer(Int64(r.replies)),
                                                           "editsPerSecond": .double(r.editsPerSecond)]))
        } else {
            print("real binary over stdio: \(Int(r.editsPerSecond)) single-character edits/s, each acknowledged (\(r.replies) replies read)")
        }
    }

    private func runStorageBenchmark(_ paths: [String]) throws {
        let trace = try paths.first { $0.contains("automerge-paper") }.map { try EditingTrace(contentsOf: $0) }
        let r = try StorageBenchmark(trace: trace).run()
        if json {
            for t in r.typing {
                print(JSONSerializer(sortedKeys: true).string(["storage": .string(t.mode), "edits": .integer(Int64(t.edits)),
                                                               "editsPerSecond": .double(t.editsPerSecond), "diskBytes": .integer(Int64(t.diskBytes))]))
            }
            print(JSONSerializer(sortedKeys: true).string(["snapshot": "3 MB document", "seconds": .double(r.largeSnapshotSeconds),
                                                           "bytes": .integer(Int64(r.largeSnapshotBytes))]))
            for c in r.coldStarts {
                print(JSONSerializer(sortedKeys: true).string(["coldStart": .string(c.policy), "operations": .integer(Int64(c.operations)),
                                                               "seconds": .double(c.seconds), "diskBytes": .integer(Int64(c.diskBytes)),
                                                               "characters": .integer(Int64(c.characters))]))
            }
        } else {
            print("storage (typing through the daemon in process, a data directory in \(NSTemporaryDirectory())):")
            for t in r.typing {
                let perEdit = t.diskBytes > 0 ? String(format: ", %.1f disk bytes per edit", Double(t.diskBytes) / Double(t.edits)) : ""
                print("  \(t.mode.padding(toLength: 26, withPad: " ", startingAt: 0)) \(Int(t.editsPerSecond)) edits/s (\(t.edits) edits\(perEdit))")
            }
            print("  snapshot of a 3 MB document \(ms(r.largeSnapshotSeconds)) on the event loop, \(r.largeSnapshotBytes / 1024) KiB")
            for c in r.coldStarts {
                print("  cold start, \(c.policy.padding(toLength: 20, withPad: " ", startingAt: 0)) \(ms(c.seconds)) for \(c.operations) operations (\(c.characters) characters), \(c.diskBytes / 1024) KiB on disk, \(String(format: "%.1f", Double(c.diskBytes) / Double(c.operations))) bytes per operation")
            }
        }
    }

    private func runDaemonBenchmark() {
        let d = DaemonBenchmark(edits: 100_000, repetitions: Swift.max(1, repetitions / 2)).run()
        if json {
            let row: [String: JSONValue] = [
                "daemon": "stdio-path-in-process", "edits": .integer(Int64(d.edits)),
                "requestEditsPerSecond": .double(d.requestEditsPerSecond), "notificationEditsPerSecond": .double(d.notificationEditsPerSecond),
                "bytesToOtherEditor": .integer(Int64(d.bytesToOtherEditor)),
                "openThreeMegabyteSeconds": .double(d.openLargeSeconds), "keystrokeInThreeMegabyteSeconds": .double(d.keystrokeLargeSeconds),
            ]
            print(JSONSerializer(sortedKeys: true).string(.object(row)))
        } else {
            print("""
            daemon (framing + JSON + CRDT, a second editor receiving every edit):
              typing            \(Int(d.requestEditsPerSecond)) edits/s as requests, \(Int(d.notificationEditsPerSecond)) edits/s as notifications (\(d.edits) single-character edits)
              to the other      \(d.bytesToOtherEditor / d.edits) bytes per keystroke sent to the other editor
              3 MB document     opened through document/open in \(ms(d.openLargeSeconds)); a keystroke in its middle \(String(format: "%.1f µs", d.keystrokeLargeSeconds * 1e6))
            """)
        }
    }

    func ms(_ seconds: Double) -> String { String(format: "%8.2f ms", seconds * 1000) }
    func fmt(_ x: Double) -> String { String(format: "%.2f", x) }
}

/// Runs the shared anchors script (Loro, Yrs through Python) on the same machine, same run.
enum Anchors {
    static func measure(tracePath: String, repetitions: Int) -> [String: Double] {
        guard let traces = EditingTrace.sharedTracesDirectory() else { return [:] }
        let script = (traces as NSString).deletingLastPathComponent + "/bench/anchors.py"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, tracePath, "--json", "--reps", String(repetitions)]
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return [:] }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var result: [String: Double] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let row = try? JSONParser().parse(String(line)), let mode = row["mode"]?.stringValue else { continue }
            if case .double(let s)? = row["seconds"] { result[mode] = s }
        }
        return result
    }
}
