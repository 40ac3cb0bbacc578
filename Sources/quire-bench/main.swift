import EditingTraces
import ReplicatingTypes
import Foundation

let trace = try EditingTrace(contentsOf: CommandLine.arguments[1])
for _ in 0..<4 { var a = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1), paragraphBreak: { $0 == "\n" }); for p in trace.patches { if p.removeCount > 0 { a.removeSubrange(p.position..<(p.position + p.removeCount)) }; if !p.insert.isEmpty { a.insert(contentsOf: p.insert, at: p.position) } } }
let t0 = Date()
var array = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1), paragraphBreak: { $0 == "\n" })
for p in trace.patches {
    if p.removeCount > 0 { array.removeSubrange(p.position..<(p.position + p.removeCount)) }
    if !p.insert.isEmpty { array.insert(contentsOf: p.insert, at: p.position) }
}
let t = Date().timeIntervalSince(t0)
var s = String.UnicodeScalarView(); s.append(contentsOf: array.elements)
print(trace.patches.count, t, String(s) == trace.endContent)
