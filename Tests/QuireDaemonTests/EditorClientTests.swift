import Foundation
import Testing
import QuireTestSupport

/// The editor clients in the real editors, headless, against the built daemon.
@Suite(.serialized) struct EditorClientTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a test script of the repository with the built quire; returns its status and output.
    static func run(_ script: String) throws -> (Int32, String) {
        let process = Process()
        // A bound on each script, so a hung editor fails its test instead of stalling CI.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "10", "600", "/bin/bash", repository.appendingPathComponent(script).path, DaemonProcess.binary.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func vimClient() throws {
        let (status, text) = try Self.run("editors/vim/test/run.sh")
        #expect(status == 0, "Vim client tests (needs vim 9: apt-get install vim):\n\(text)")
        #expect(["test_share.vim", "test_apply.vim", "test_reconnect.vim", "test_file.vim", "test_undo.vim", "test_intent.vim", "test_peers.vim",
                "test_commands.vim", "test_formats.vim", "test_workflows.vim"].allSatisfy { text.contains("ok   \($0)") })
    }

    @Test func emacsClientByteCompilesCleanlyAndPassesItsTests() throws {
        let (status, text) = try Self.run("editors/emacs/test/run.sh")
        #expect(status == 0, "Emacs client tests (needs emacs 28: apt-get install emacs-nox):\n\(text)")
        // As many as the test files define, so a test that silently stops running is noticed.
        let tests = try ["quire-test.el", "quire-workflow-test.el"].reduce(0) { count, file in
            try count + String(contentsOf: Self.repository.appendingPathComponent("editors/emacs/test/" + file), encoding: .utf8)
                .components(separatedBy: "(ert-deftest ").count - 1
        }
        #expect(tests >= 5 && text.contains("Ran \(tests) tests, \(tests) results as expected, 0 unexpected"), "every ERT test ran and passed")
    }

    /// Two people as they really work: Vim and Emacs in tmux, driven by keystrokes, on two
    /// paired daemons, typing into the same lines at once, racing a deletion, pasting, undoing,
    /// with each daemon killed (-9) mid-typing in turn. Checks every typed token, not just that
    /// the buffers agree.
    @Test func twoPeopleTypingThroughCrashesKeepEveryToken() throws {
        let (status, text) = try Self.run("editors/test/keystrokes.sh")
        #expect(status == 0, "keystrokes (needs tmux, vim and emacs):\n\(text)")
        #expect(text.contains("ok   keystrokes: Vim and Emacs on paired daemons"), "\(text)")
    }

    /// Issue 18's commands in Vim, Emacs and Neovim (tmux, keystrokes) on three paired daemons,
    /// each while another person types code-like tokens: Emacs M-c, M-u, M-q, yank and undo,
    /// revert-buffer after an outside sed; Neovim :w then another editor opening the file, 3u;
    /// Vim J, gq, :sort, ddp, :e!, :%s and u over 200 lines, kill -9 of its daemon during a
    /// :%s over 5,000 lines. Every token once and whole, each command's effect exactly once.
    @Test func editorCommandsWhileAnotherPersonTypes() throws {
        let (status, text) = try Self.run("editors/test/commands.sh")
        #expect(status == 0, "commands (needs tmux, vim, emacs and nvim):\n\(text)")
        #expect(text.contains("ok   commands: Vim, Emacs and Neovim on paired daemons"), "\(text)")
    }

    /// README's install lines, followed verbatim in a fresh home directory.
    @Test func installLinesWorkInAFreshHome() throws {
        let (status, text) = try Self.run("editors/test/install.sh")
        #expect(status == 0 && text.contains("ok   install:"), "\(text)")
    }

    @Test func neovimClient() throws {
        let (status, text) = try Self.run("editors/nvim/test/run.sh")
        #expect(status == 0, "Neovim client tests (needs neovim >= 0.7: apt-get install neovim):\n\(text)")
        #expect(["test_client.lua", "test_commands.lua", "test_workflows.lua"].allSatisfy { text.contains("ok   \($0)") }, "\(text)")
    }

    /// Vim, Emacs and Neovim on three chained daemons join one document by name and see each
    /// other's cursors and names.
    @Test func threeEditorsOnThreeDaemonsSeeEachOther() throws {
        let (status, text) = try Self.run("editors/test/three.sh")
        #expect(status == 0, "three editors:\n\(text)")
        #expect(text.contains("ok   three:"), "\(text)")
    }

    /// Issue 21 end to end (tmux, keystrokes, three homes): `quire share`, two `quire join`s;
    /// Vim, Neovim and Emacs open the same file by path (joining by opening), type at once and
    /// save; Neovim jumps to and follows the host, Emacs follows, into other files. Every token
    /// once in every buffer and copy on disk, and the three project trees byte-identical.
    @Test func shareJoinAndEditTheProjectInThreeEditors() throws {
        let (status, text) = try Self.run("editors/test/project.sh")
        #expect(status == 0, "project (needs tmux, vim, emacs and nvim):\n\(text)")
        #expect(text.contains("ok   project: quire share, two quire joins"), "\(text)")
    }

    /// Read-only buffers by keystrokes (tmux): Vim, Neovim and Emacs sharing a document the
    /// daemon says is read-only (a stand-in daemon, `editors/test/readonly_daemon.py`) refuse
    /// typing three ways three times with no change and one message each, show it on the status
    /// line, still show a writer's edit, and edit again once the role allows it.
    @Test func readOnlyBuffersRefuseTypingAndSayWhyOnce() throws {
        let (status, text) = try Self.run("editors/test/readonly_keys.sh")
        #expect(status == 0, "readonly_keys (needs tmux, vim, emacs, nvim and python3):\n\(text)")
        #expect(text.contains("ok   readonly_keys:"), "\(text)")
    }

    /// Issue 22 in real editors with real daemons and roles (tmux, three homes): a reader's
    /// invitation, Neovim and Emacs read-only (typing changes nothing anywhere, one message each),
    /// following the writer in Vim into another file, then a role change making one a writer.
    @Test func readersFollowTheWriterAndCannotChangeTheBuffer() throws {
        let (status, text) = try Self.run("editors/test/readonly.sh")
        #expect(status == 0, "readonly (needs tmux, vim, emacs and nvim):\n\(text)")
        #expect(text.contains("ok   readonly:"), "\(text)")
    }

    /// A file shared by itself in real editors (tmux, two homes): `quire share FILE`, `quire
    /// invite --role read --once FILE`, `quire join`; Vim and Neovim open the file by path and
    /// join its document, the reader's Neovim is read-only (typing changes nothing anywhere) and
    /// follows the writer's typing.
    @Test func aFileSharedByItselfIsReadOnlyForItsReader() throws {
        let (status, text) = try Self.run("editors/test/onefile.sh")
        #expect(status == 0, "onefile (needs tmux, vim and nvim):\n\(text)")
        #expect(text.contains("ok   onefile:"), "\(text)")
    }

    @Test func editorsOnPairedDaemonsEndIdentical() throws {
        let (status, text) = try Self.run("editors/test/e2e.sh")
        #expect(status == 0, "end to end:\n\(text)")
        for pair in ["vim-emacs over tcp", "vim-emacs over pipe", "vim-vim over tcp", "emacs-emacs over tcp"] {
            #expect(text.contains("ok   e2e \(pair)"), "\(pair):\n\(text)")
        }
    }
}
