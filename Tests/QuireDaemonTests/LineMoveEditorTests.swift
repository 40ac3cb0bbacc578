import Testing

/// Line moves in the real Vim (`:m 0`, `:m +2`, `ddp`, `:sort`, `:g/^/m`) while a second Vim on
/// another daemon types in a line that stays put, three runs (every arrival order must give the
/// same text): both buffers identical, each token in the line it was typed in
/// (editors/test/line_moves.sh; protocol/decisions/edit-intent.md, rule 7).
@Suite struct LineMoveEditorTests {
    @Test func vimLineMovesKeepAPartnersTokenInItsLine() throws {
        let (status, text) = try EditorClientTests.run("editors/test/line_moves.sh")
        #expect(status == 0, "line moves (needs vim):\n\(text)")
        #expect((1...3).allSatisfy { text.contains("ok   line_moves run \($0):") }, "\(text)")
    }
}
