import Testing
import JSON

/// Our jansson wrapper against JSONTestSuite (../shared/conformance/json): every `y_` file parses,
/// every `n_` file is rejected, and the implementation-defined `i_` files behave as recorded.
@Suite struct JSONConformanceTests {
    static let files = SharedConformance.jsonFileNames
    /// jansson refuses `\u0000` inside object keys by design (akheron/jansson#331).
    static let knownRejectedValid: Set<String> = ["y_object_escaped_null_in_key.json"]
    /// The implementation-defined files jansson accepts; all others it rejects.
    static let acceptedImplementationDefined: Set<String> = [
        "i_number_double_huge_neg_exp.json", "i_number_real_underflow.json", "i_structure_500_nested_arrays.json",
    ]

    @Test func conformanceFilesAreFound() {
        #expect(Self.files.count == 318, "expected JSONTestSuite's 318 files in ../shared/conformance/json")
    }

    @Test(arguments: files.filter { $0.hasPrefix("y_") })
    func validDocumentParses(name: String) throws {
        let bytes = try SharedConformance.bytes(ofJSONFile: name)
        let result = Result { () throws(JSONParseError) in try JSONParser().parse(bytes) }
        if Self.knownRejectedValid.contains(name) {
            #expect(throws: JSONParseError.self) { try result.get() }
        } else {
            let value = try result.get()
            // What we parse survives a round trip through the serializer.
            let reparsed = try JSONParser().parse(JSONSerializer().serialize(value))
            #expect(reparsed == value || value.containsNaN)
        }
    }

    @Test(arguments: files.filter { $0.hasPrefix("n_") })
    func invalidDocumentIsRejected(name: String) throws {
        let bytes = try SharedConformance.bytes(ofJSONFile: name)
        #expect(throws: JSONParseError.self) { try JSONParser().parse(bytes) }
    }

    @Test(arguments: files.filter { $0.hasPrefix("i_") })
    func implementationDefinedDocumentIsDecidedWithoutCrashing(name: String) throws {
        let bytes = try SharedConformance.bytes(ofJSONFile: name)
        let accepted = (try? JSONParser().parse(bytes)) != nil
        #expect(accepted == Self.acceptedImplementationDefined.contains(name))
    }
}

extension JSONValue {
    /// NaN never equals itself; no conformance file yields one, but the check keeps the test honest.
    var containsNaN: Bool {
        switch self {
        case .double(let d): return d.isNaN
        case .array(let items): return items.contains { $0.containsNaN }
        case .object(let members): return members.values.contains { $0.containsNaN }
        default: return false
        }
    }
}
