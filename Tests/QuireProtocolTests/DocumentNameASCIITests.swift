import Testing
import QuireProtocol

/// `DocumentName.isUnsafe` answers ASCII without the general-category table: for every ASCII
/// scalar its answer is the table's rule (controls, formats, separators, surrogates, private use,
/// unassigned are unsafe).
@Suite struct DocumentNameASCIITests {
    @Test func asciiAnswerIsTheCategoryRule() {
        for value in UInt8(0)...UInt8(0x7F) {
            let scalar = Unicode.Scalar(value)
            let byCategory: Bool
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: byCategory = true
            default: byCategory = false
            }
            #expect(DocumentName.isUnsafe(scalar) == byCategory, "U+\(String(value, radix: 16))")
        }
        #expect(DocumentName.problem("src/a\u{7F}.swift") != nil)
        #expect(DocumentName.problem("src/a\u{9B}.swift") != nil)
        #expect(DocumentName.problem("src/a b~!.swift") == nil)
    }
}
