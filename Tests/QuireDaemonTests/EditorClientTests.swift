import Foundation
import Testing

/// The editor clients in the real editors, headless, against the built daemon.
@Suite(.serialized) struct EditorClientTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func vimClient() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.repository.appendingPathComponent("editors/vim/test/run.sh").path, DaemonProcess.binary.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "Vim client tests (needs vim 9: apt-get install vim):\n\(text)")
        #expect(text.contains("ok   test_share.vim"))
    }
}
