import EditingTraces
import Foundation
import Testing
@testable import ReplicatingTypes

/// States written by the code before the leaf layout (commit c98e325~1, leaves of one paragraph)
/// decode on this code to the same replicated state as the same edits made here, and this code
/// writes the same format-1 bytes. (The reverse, this code's states decoded by the old code, was
/// checked by hand when the fixtures were made.)
@Suite struct CrossVersionCodingTests {
    /// Three copies edit a text of mixed widths concurrently, messages delivered out of order;
    /// then one copy drops its tombstones and edits on. Deterministic, public API only, so that
    /// the code before the leaf layout ran it too.
    static func crossVersionScenario() -> (state1: [UInt8], state2: [UInt8], compacted: ReplicatingText) {
        var random = SeededRandom(seed: 2_026)
        let alphabet: [Unicode.Scalar] = ["a", "b", " ", "\n", "\n", "\r", "é", "ÿ", "中", "😀"]
        func text(_ n: Int) -> [Unicode.Scalar] { (0..<n).map { _ in alphabet[random.below(alphabet.count)] } }
        let start = (0..<40).map { "line \($0) é中" + String(repeating: "z", count: $0 % 13) + ($0 % 5 == 0 ? "😀\r" : "") }.joined(separator: "\n")
        var copies = [ReplicatingText(start, replica: ReplicaID(1)), ReplicatingText(replica: ReplicaID(2)), ReplicatingText(replica: ReplicaID(3))]
        for op in copies[0].operations() { copies[1].integrate(op); copies[2].integrate(op) }
        var queues: [[ReplicatingArrayOperation<Unicode.Scalar>]] = [[], [], []]
        for _ in 0..<150 {
            let k = random.below(3)
            if random.below(3) == 0 {
                if !queues[k].isEmpty { copies[k].integrate(queues[k].remove(at: random.below(queues[k].count))) }
                continue
            }
            let n = copies[k].count
            let at = random.below(n + 1)
            let ops = n > 0 && random.below(5) < 2
                ? copies[k].replace(min(at, n - 1)..<min(n, at + 1 + random.below(40)), with: [])
                : copies[k].replace(at..<at, with: text(1 + random.below(random.below(8) == 0 ? 200 : 12)))
            for other in 0..<3 where other != k { queues[other].append(contentsOf: ops) }
        }
        for k in 0..<3 { for op in queues[k] { copies[k].integrate(op) } }
        var compacted = copies[0]
        compacted.dropTombstones()
        for _ in 0..<30 {
            let n = compacted.count
            let at = random.below(n + 1)
            if n > 0, random.below(2) == 0 { compacted.replace(min(at, n - 1)..<min(n, at + 1 + random.below(30)), with: []) } else { compacted.replace(at..<at, with: text(1 + random.below(20))) }
        }
        return (copies[0].encodedState(), compacted.encodedState(), compacted)
    }

    /// `crossVersionScenario().state1` as the old code wrote it (state format 1).
    static let oldState1 = [
        "AQMBAgOeAQAAAAIDA2xpbhQAAAQEZSAwIBUAAAMUAAADAw0KbBUAAAoVAAAKFQAABxUAAAoVAAAuFQAABBUAAAYVAAAJFQAA",
        "BRUAAAEVAAAEFAAAAQF6FQAAARUAAAMVAAAKFQAADhQAAAICMTAVAAARFQAABhUAAAgVAAAOFQAAERUAAAgVAAACFQAABRQA",
        "AAQFMTQgw6kVAAADFQAABhUAADYVAAAEFQAABRUAAAgVAAABFQAABRQAAAICMCAVAAAdFAAAAgJ6ChUAAA8VAAAOFAAAAQPk",
        "uK0VAAABFQAAChQAAAsObGluZSAyNCDDqeS4rXoVAAAQFQAAIxUAAAEUAAAFCDI3IMOp5LitFAAABwd6CmxpbmUgFAAAAwMy",
        "OCAUAAABAsOpFQAABxUAAAcVAAACFAAABAR6CmxpFAAAGiNuZSAzMCDDqeS4rXp6enrwn5iADQpsaW5lIDMxIMOp5LitehQA",
        "AAEBehUAAA0UAAAEBuS4rXp6ehUAAA8VAAAHFQAABBUAAAQVAAAEFAAAHCJ6enp6enoKbGluZSAzNSDDqeS4rXp6enp6enp6",
        "evCfmIANFQAAHRQAAAMGIMOp5LitFQAABxUAAA0VAAAOFQAACxkAAIcJCw0BABUApwMDDQIABQByBwUBAAcICAAAAK8DChTD",
        "v/CfmIDDqcOpCiBi8J+YgMOpYgwBABMAtQQCBMOpw6kMAgADAPUBBgliIA3wn5iAYQ0MAQAHAIAFAwZi8J+YgGEdAAAA4QEC",
        "DQIAAQCrAggNAQANAJsFAh0AAAC8AgwEAAAVAQLDvxkAAJUFCgwCAA0AmwQCAmFhFQAACQgAAAdzAQFiDAEAAQACBAcKCvCf",
        "mIBhBQAABQYMAQAFAO8BBxEN8J+YgOS4rSDwn5iA5LitDQwCAA0AMQsUw6kK5Lit8J+YgApiYWHDv2HkuK0JAAAPzQoIDAEA",
        "BwDEAhgnDcOpDQrkuK0gYsOp8J+YgGHwn5iA5LitYgpiw6kKCsO/CiBhDcO/CQAAJ9cCBwwCAA0A1wMLFMOp5Litw79iIPCf",
        "mIBi5LitDWFhCQAAB8sJBwwCAAUAfgwTw6kK8J+YgAoN5Litw78KCgoKDQgAABG1AwEBYhkAAOcCCAQBAAUgPMO/8J+YgGEN",
        "Cgrwn5iACmFhCsO/YgrDvw1iw7/Dvw0NCuS4rfCfmIDwn5iA8J+YgGHDv2Hwn5iAw7/DqQgAADmHBAYKCg3kuK0gw7/DqQwC",
        "AAsAfgIDw6kNHAAAABYIDQrDqcOpCmEK8J+YgA0IAAAHhwQBAsO/GAAA0QkMGw3wn5iA8J+YgOS4rfCfmIAgIOS4rQrDqWHD",
        "vwQCABEEBApiYgocAAAAyAEGCAoNYgrDv8O/CAAAAZcHAQEKGQAAnQkUBQIAJwEcAAAArwIFBw0NYWLkuK0cAAAArAEJEOS4",
        "rcOpCiDkuK0KYeS4rQoEAQALDhQNYWINCiAK5LitCvCfmIBhw6lhDQwCAA8AfAYO5Litw6li8J+YgCDkuK0EAAABgQHTAQrD",
        "vwphw6lhIMOpIA1hDQ0K5Litw6liCgphCmJhYg3kuK1iCmIK5LitDQogIPCfmIDwn5iACvCfmIBiw79hCgrkuK1iIPCfmIDk",
        "uK3wn5iACsOp5LitCgoNCsOpCvCfmIAKw7/DqSANYmEK8J+YgGLkuK0NCmEKCgoKIGHwn5iAw78gYg3DqQrkuK0NDWHwn5iA",
        "CmLkuK1iw6nDvw3kuK0N5Lit8J+YgGENw6kNIPCfmIAKIMO/Ygphw7/wn5iAw6kKYcO/CiDDqWHkuK3wn5iAIGEMAgD/AQEC",
        "CQsKYQogYWEKw7/DvwQBAA0QG+S4rWLwn5iAw6kKYg3DqQrDqWIgCsO/5LitDQwCABEAygMGC+S4rQrDqcOpYsO/HAAAAOsD",
        "ChZh8J+YgPCfmIDDqWLDvwrwn5iAw79hBAEADRglYWEKw79hw78KYeS4rWIKCg3wn5iACmLDqQ3kuK3DvwrkuK0NIA0CACEA",
        "2QEGHQAAAOIDChgAAJEBAgJiCgQBAAEKDmENw6kKCuS4rWJhIMOpDAIAEQDjAgsQCgoNYg0g5LitCvCfmIBiYQUBAAMCHAAA",
        "ALkEBgwKCvCfmIDkuK3DqQ0MAgALAL0CZaIBYmLDv8O/w78NDSBh5LitYgogw6kKIMO/8J+YgMOpDWLDv2INYcO/CmEK5Lit",
        "w6nwn5iAIArwn5iACuS4rcO/CsOpYeS4rWIKDQoKIAphw79h5Litw6nwn5iACsO/5Litw6kgIGIKYmIKYuS4rSAKw6lhCgrD",
        "vw0NYmHkuK0NDcOpCuS4rWJhIOS4reS4rQ0Nw6kKIA3Dv/CfmIDwn5iAw78KDAEAvQEAggMHDuS4rQrDvwrDv2Lwn5iAFAAA",
        "BQrwn5iADQ0N5LitHAAAACANF8O/CsO/DWLwn5iAYcO/YcO/DcOp5LitFQAADBQAAAwSYWFiw6kKIArkuK1h8J+YgCBhGAAA",
        "twEJDsO/IGFiCmIKw6nwn5iAGAAAZwwUCmLwn5iA5LitYcO/w6kKCg0Nw78EAAADCAwKIArwn5iAYcO/CmIIAQALsQErQcOp",
        "w78KCsOpCsOpw78KCiANw6liCiAKw78KICDDv/CfmIBhw6kKYsO/5LitDQrDqSDwn5iACgoN5LitICBiw6kKBQAASQcYAAD3",
        "DAQHw78N5LitChgAACcME+S4rQogIPCfmIDDqWJhCiDDv2IZAADnDAYYAAD/AwICYWIYAACzCwYJYWJhYWLwn5iABQEAACUU",
        "AAANFAoNDfCfmIDDv2EgCmJiCuS4rcOpHAAAAF8CA8O/ChwAAADQAwcJYuS4rSAKYQ1hHAAAALoBAwNiYWIcAAAAeAsRYsO/",
        "w6kKYcO/5LitYcOpCg0YAADFBAQFw78KCgoYAADxAwECw78cAAAAuQQCA8O/ChgAAJMEAwNhCgoCHgAHAwANcAB+HACcAU0A",
        "7QFWAMUCHQDkAh0AggMLAJgDNADcAxAAiwQNAJwEIgDaBB0A+gQ4AL0FCgDIBRwA5QUIAIEGFACeBwcAtQcGAQALARAQAaMB",
        "AgHEAQwBnAIlAgAHAg0IAhcJAlYBAoQBEA==",
    ].joined()

    /// `crossVersionScenario().state2` as the old code wrote it (format 2, compacted, runs
    /// cut at the old leaves' paragraph boundaries).
    static let oldState2 = [
        "AgMB/QgDhgIC7wK2AgAAAAEDA2xpbgQCIMgFAAIBAQoCAiHJBQEBCgICIsoFAgXwn5iAYQIAAwQEBGUgMCACAAoLAgINCgIA",
        "DA0BAWwEAUTwBQAWAQEKAgFF8QUCBMOpw6kDAUfzBQEDAUj0BQIDAUr2BQIFAZQBwAYBSwIDAUz4BQECAU35BQMDYmIKBAK3",
        "Ad8GACACA8O/CgICuQHhBgsUw78NYvCfmIBhw79hw78Nw6nkuK0CAtAB+AYFBmFhYsOpCgIC1QH9BgICIAoCAtcB/wYFCuS4",
        "rWHwn5iAIGEEASDMBQAxAQLDqQQAqgj+CAEgAgXwn5iACgIArAiACQEBYgQA2AisCQCsCAEBCgIA2QitCQEBCgIA2giuCQIC",
        "DQoCANwIsAkGDfCfmIDwn5iAw6kNYgoCAOIItgkCBOS4rQoCAOQIuAkCBOS4rQoCAOYIugkCBeS4rcOpAgCtCIEJBQnDv8O/",
        "5LitDQoCALIIhgkCAg0KAgC0CIgJAwXDv8O/CgIAtwiLCQEBCgIAuAiMCQIE5LitCgIAugiOCQEBCgIAuwiPCQEBCgIAvAiQ",
        "CQIDw78KAgEhzQUBAQoCASLOBQMI5Lit8J+YgAoCASXRBQYJYmFhw79h5LitBALOAvYHAF8CA8O/CgQApQemBwBpBAfDvw3k",
        "uK0KBALaAoIIAHgEBmLDv8OpCgIC3gKGCAYKYcO/5LitYcOpCgIC5AKMCAEBDQQBZZEGAHwGDuS4rcOpYvCfmIAg5LitAgB9",
        "fgEBegQBQu4FAH4CA8OpDQQBNuIFAH4CA8OpCgIBOOQFAgXwn5iACgIBOuYFBAcN5Litw78KAgE+6gUBAQoCAT/rBQEBCgIB",
        "QOwFAQEKAgFB7QUBAQ0EAPQF9QUAiwEJFg3wn5iA8J+YgOS4rfCfmIAgIOS4rQoCAP0F/gUDBcOpYcO/AgCaAZsBAgIxMAUB",
        "XIgGAKwBAwMBX4sGAwMBYo4GAwMAlQaWBgEDAJYGlwYCAwCYBpkGCwMAowakBgQCAKcGqAYBAQoCAKgGqQYCAmEKAwCqBqsG",
        "BwMAsQayBgIDALMGtAYDAgC2BrcGBQsgIPCfmIDwn5iACgIAuwa8BgMH8J+YgGLDvwQA/gfSCAC9BgIDw78KAgCACNQIAwMN",
        "IAoEAMwIoAkAgggBAQoCAM0IoQkCAmEKAgDPCKMJAwfwn5iAw78KAgDSCKYJBgog5LitIOS4rQ1hAgCDCNcIAQFiBAC+CJIJ",
        "AIMIAwTDqSAKAgDBCJUJAQEKAgDCCJYJBQjDqcOpIMO/CgIAxwibCQUHIGFh5LitCgIAvga/BgICYQoCAMAGwQYBAQoCAMEG",
        "wgYDBeS4rWIgAwDEBsUGBAMAyAbJBgMDAMsGzAYBAwDMBs0GAgMAzgbPBgIDANAG0QYCAwDSBtMGBwMA2QbaBgUDAN4G3wYC",
        "AwDgBuEGAQIA4QbiBgEBCgIA4gbjBgEBCgIA4wbkBgkOIGHwn5iAw78gYg3DqQoCAOwG7QYGC+S4rQ0NYfCfmIAKAgDyBvMG",
        "ESBi5LitYsOpw78N5LitDeS4rfCfmIBhDcOpDSDwn5iACgIAgweEBwQFIMO/YgoCAIcHiAcCA2HDvwMAiQeKBwMDAIwHjQcD",
        "AwCPB5AHBwUAqQeqBwCVBwIDAKsHrAcEBQDDB5cIAK4HAgMAxQeZCAECAMYHmggCBOS4rQoCAMgHnAgCBfCfmIAKAgDKB54I",
        "BAfDqSDkuK0KAgDOB6IIAwfwn5iAw78KAgDRB6UIAQEKAgDSB6YIAQEgAwDTB6cIAQMArwewBwMDALIHswcDAwCWB5cHAQMA",
        "lweYBwIDAJkHmgcEAwCdB54HAQUC1wL/BwC6AQMFAVD8BQDIAQEDAVH9BQICAVP/BQEBCgIBVIAGAgTDv8O/BAC9B74HAOMB",
        "BglhYmFhYvCfmIACAOkB6gEEBTE0IMOpBAIkzAUA7wEHEQ3wn5iA5LitIPCfmIDkuK0NBAEHswUA9QEGCWIgDfCfmIBhDQQB",
        "V4MGAK8CBQcNDWFi5LitBACABoEGALQCAQEKBAGhAc0GAL0CDBFiYsO/w7/Dvw0NIGHkuK1iCgIBrQHZBgMEIMOpCgIBsAHc",
        "BgoQIMO/8J+YgMOpDWLDv2INYQMBugHmBgIDAbwB6AYCAwG+AeoGBQMBwwHvBgIDAcUB8QYDAwHIAfQGBQMBzQH5BgECAc4B",
        "+gYBAQoCAc8B+wYBAQoCAdAB/AYCAiAKAgHSAf4GBw5hw79h5Litw6nwn5iACgIB2QGFBwcLw7/kuK3DqSAgYgoCAeABjAcD",
        "A2JiCgIB4wGPBwEBYgMB5AGQBwMDAecBkwcDAwHqAZYHAQMB6wGXBwoDAfUBoQcIAgH9AakHAgPDqQoCAf8BqwcHDyANw7/w",
        "n5iA8J+YgMO/CgIAwwLEAgICMCAEAivTBQDEAgQFDcOpDQoCAi/XBQoV5LitIGLDqfCfmIBh8J+YgOS4rWIKAgI54QUDBGLD",
        "qQoCAjzkBQEBCgICPeUFAgPDvwoCAj/nBQQFIGENw78EAuUCjQgCQgIDw78KAgLnAo8IAQEKAgLoApAIAQEKAgJD6wUFCcO/",
        "8J+YgGENCgICSPAFAQEKAgJJ8QUCBfCfmIAKAgJL8wUDA2FhCgICTvYFAwTDv2IKAgJR+QUIC8O/DWLDv8O/DQ0KAgJZgQYK",
        "G+S4rfCfmIDwn5iA8J+YgGHDv2Hwn5iAw7/DqQQC7AKUCAJiAgJhCgIC7gKWCAEBCgICY4sGAwMNYWIEAP0H0QgCZQEE8J+Y",
        "gAICZo4GAgINCgICaJAGAgIgCgICapIGAgTkuK0KAgJslAYFCfCfmIBhw6lhDQQC6QKRCAJwAQLDvwICcZkGBQvkuK1i8J+Y",
        "gMOpCgICdp4GBAViDcOpCgICeqIGBAXDqWIgCgICfqYGAwbDv+S4rQ0FAtwBhAcCgAEFAwLhAYkHAgMC4wGLBwIDAoEBqQYD",
        "AwKEAawGBAMCiAGwBgQDAowBtAYBAwKNAbUGAwMCkAG4BgYDApYBvgYDBQLxAZkHApgBAwMC9AGcBwEDAvUBnQcCAgL3AZ8H",
        "AwXDqcO/CgIC+gGiBwEBCgIC+wGjBwUGIA3DqWIKAgKAAqgHAgIgCgICggKqBwIDw78KAgKEAqwHBwwgIMO/8J+YgGHDqQoC",
        "AosCswcFCGLDv+S4rQ0KAgKQArgHBAjDqSDwn5iACgIClAK8BwEBCgIClQK9BwcKDeS4rSAgYsOpCgICwQLpBwEBCgICwgLq",
        "BwcLDQ3wn5iAw79hIAoCAskC8QcDA2JiCgICzAL0BwIF5Litw6kCApkBwQYEBWENw6kKAgKdAcUGAQEKAgKeAcYGBQjkuK1i",
        "YSDDqQIA4gLjAgICegoEAZYBwgYA4wIBAQoCAZcBwwYBAQoCAZgBxAYFBw1iDSDkuK0EAPsHzwgBnAECA8OpCgIBnQHJBgEB",
        "CgIBngHKBgMG8J+YgGJhBADUB6gIAaABBQVhYmENYQQAkAjkCADYBwsR8J+YgGHDvw0NIMO/w6kgDQoCAJsI7wgDB/CfmIDD",
        "qQoCAJ4I8ggFCWLDvw3DqeS4rQIA2QetCAEBCgIA2geuCAEBCgIA2wevCAEBCgQAhAjYCADbBwMFIOS4rQoCAIcI2wgJE+S4",
        "rQ0N5Lit5LitIMO/DfCfmIACANwHsAgCAg0KAgDeB7IIAQEKAgDfB7MICRDkuK3DqQ3kuK3DqWLDqSAKAgCBA4IDAQPkuK0E",
        "AqsB0wYAggMCBOS4rQoCAq0B1QYCA8O/CgICrwHXBgMHw79i8J+YgAQC5QGNBwKxAQEBCgIC5gGOBwcOYvCfmIDkuK1hw7/D",
        "qQoCAu0BlQcBAQoCAu4BlgcDBA0Nw78CArIB2gYFCvCfmIANDQ3kuK0CAI0DjgMFBWxpbmUgAwCSA5MDBgUBa5cGAgIBAwFs",
        "mAYCAwFumgYEAwFyngYCBQF0oAYAygMCAwF2ogYEAwDMA80DBQUC0AL4BwDQAwQDAtQC/AcDAwDRA9IDAgMA0wPUAwUFASvX",
        "BQDXAwQCAS/bBQcMIPCfmIBi5LitDWFhAgDYA9kDAwMyOCAEALIFswUA2gMECsO/8J+YgMOpw6kEAKMI9wgAtQUFC8O/5Lit",
        "DfCfmIAKAgCoCPwIAgXwn5iAYQIAtgW3BQEBCgIAtwW4BQMGIGLwn5iABADyCMYJALkFCRJh8J+YgGHDqcO/w79h8J+YgAoC",
        "APsIzwkCAmFiAwC6BbsFAgUAuwe8BwC7BQIDALwFvQUBAwDbA9wDAQUA7QXuBQDpAwEDAO4F7wUFBQF6pgYA6wMFAgF/qwYC",
        "A8O/CgIBgQGtBgMH8J+YgMO/YQIA7APtAwICegoCAO4D7wMCAmxpBADzBfQFAO8DAQLDvwIA8APxAw8VbmUgMzAgw6nkuK16",
        "enp68J+YgA0KAgD/A4AEBwdsaW5lIDMxBADoCLwJAIUEChMNw6nDv8O/5LitYQ3wn5iAw6kKAgCGBIcEBAcgw6nkuK16BADk",
        "BeUFAIkEAQFiAgCKBIsEAQF6AgCYBJkEBAbkuK16enoEARXBBQCbBAICYWEEAguzBQC1BAECw6kEAOgHvAgCCwIF8J+YgAoC",
        "AOoHvggHCmJh8J+YgA0NDQoCAPEHxQgEB+S4rcO/YgoCAPUHyQgDBGHDvwoCAPgHzAgCBfCfmIAKAgD6B84IAQFiAgIMtAUB",
        "AsOpBALqApIIALkEAgPDvwoEAqUBzQYAuQQBAQoCAqYBzgYBAQoCAqcBzwYECvCfmIDkuK3DqQ0CAL4EvwQFBXp6enp6AwDD",
        "BMQEAgMAxQTGBAMCAMgEyQQSGGUgMzUgw6nkuK16enp6enp6enrwn5iADQIA9wT4BAMGIMOp5LitBAINtQUAgAUBAWIDAg62",
        "BQIFAMcFyAUAjQUB",
    ].joined()

    @Test func statesOfTheCodeBeforeTheLeafLayoutDecodeTheSame() throws {
        let scenario = Self.crossVersionScenario()
        let old1 = try #require(Data(base64Encoded: Self.oldState1).map { [UInt8]($0) })
        let old2 = try #require(Data(base64Encoded: Self.oldState2).map { [UInt8]($0) })
        // Format 1 is the canonical operations: byte for byte the same.
        #expect(scenario.state1 == old1)
        let decoded1 = try ReplicatingText(decodingState: old1, replica: ReplicaID(9))
        decoded1.scalars._checkInvariants()
        #expect(decoded1.encodedState() == old1)
        // Format 2 follows the leaves, so the bytes differ; the state must not.
        let decoded2 = try ReplicatingText(decodingState: old2, replica: ReplicaID(9))
        decoded2.scalars._checkInvariants()
        #expect(decoded2.scalars.leafStarts.count > 1, "the old runs fill more than one leaf here")
        #expect(decoded2 == scenario.compacted)
        #expect(decoded2.string == scenario.compacted.string)
        #expect(decoded2.scalars.visibleIDs == scenario.compacted.scalars.visibleIDs)
        #expect(decoded2.scalars.allIDsInOrder == scenario.compacted.scalars.allIDsInOrder)
        #expect(decoded2.versionVector == scenario.compacted.versionVector)
        #expect(decoded2.scalars.compactedCount == scenario.compacted.scalars.compactedCount)
        let redecoded = try ReplicatingText(decodingState: decoded2.encodedState(), replica: ReplicaID(9))
        #expect(redecoded == decoded2)
        // Edits go on in the decoded copy as in the original.
        var original = scenario.compacted
        var copy = decoded2
        for op in original.replace(0..<min(10, original.count), with: Array("new 😀\n".unicodeScalars)) { copy.integrate(op) }
        copy.scalars._checkInvariants()
        #expect(copy.string == original.string)
    }
}
