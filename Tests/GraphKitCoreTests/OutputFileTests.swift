import Foundation
import GraphKit
import GraphKitTesting
import Testing

/// The outputs' rule (a temporary file beside the target, renamed over it when complete) on
/// targets that are not plain new files: a device or a pipe, a symbolic link, a name near the
/// file system's limit, and a target another run is writing at the same time.
@Suite(.timeLimit(.minutes(10))) struct OutputFileTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func output(_ path: String) -> OutputFile { OutputFile(path: path, location: "nodes.file.params.path", node: "file") }

    /// Writes `text` through the rule: prepare, write the temporary file, commit.
    func write(_ text: String, to file: OutputFile) throws {
        try file.prepare()
        try Data(text.utf8).write(to: file.temporary)
        try file.commit()
    }

    func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as GraphError {
            #expect(error.code == .outputUnwritable)
            return error.problems.map(\.description).joined(separator: "\n")
        } catch {
            return "not a GraphError: \(error)"
        }
    }

    /// rename(2) over a named pipe or a device would replace it with a regular file (as root, a
    /// writer given /dev/full replaced the device node). Such a target is refused before
    /// anything is written, and stays what it was.
    @Test func aPipeOrADeviceIsNotReplaced() throws {
        let fifo = path("pipe.mp4")
        #expect(mkfifo(fifo, 0o644) == 0)
        let refused = message { try output(fifo).prepare() }
        #expect(refused?.contains("it is a named pipe") == true, "\(refused ?? "accepted")")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(!FileManager.default.fileExists(atPath: path(".pipe.mp4.partial")))

        let device = message { try output("/dev/null").prepare() }
        #expect(device?.contains("it is a device") == true, "\(device ?? "accepted")")
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    }

    /// A symbolic link is written through, as ffmpeg writes: the link stays and the file it
    /// names is replaced; a link to a file not made yet makes it.
    @Test func aLinkIsWrittenThrough() throws {
        let real = path("real.m4a"), link = path("link.m4a")
        try Data("old".utf8).write(to: URL(fileURLWithPath: real))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.m4a")
        try write("new", to: output(link))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real.m4a")
        #expect(try String(contentsOfFile: real, encoding: .utf8) == "new")

        let dangling = path("later.m4a")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "made.m4a")
        try write("made", to: output(dangling))
        #expect(try String(contentsOfFile: path("made.m4a"), encoding: .utf8) == "made")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dangling) == "made.m4a")
    }

    /// A name of 250 bytes is a valid file name, but ".NAME.partial" would not be (the limit is
    /// 255): the temporary name is shortened, and the output is written under its own name.
    @Test func aNameNearTheLimitIsWritten() throws {
        let name = String(repeating: "é", count: 120) + "ab.m4a"  // 246 bytes
        #expect(name.utf8.count == 246)
        let file = output(path(name))
        #expect(file.temporary.lastPathComponent.utf8.count <= 255)
        #expect(file.temporary.deletingLastPathComponent().path == folder.path)
        try write("long", to: file)
        #expect(try String(contentsOfFile: path(name), encoding: .utf8) == "long")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [name])
        // A name past the limit is refused before anything runs (it failed at the rename).
        let tooLong = String(repeating: "d", count: 252) + ".mov"
        let refused = message { try output(path(tooLong)).prepare() }
        #expect(refused?.contains("its name is 256 bytes long, and a file name takes at most 255") == true, "\(refused ?? "accepted")")
    }

    /// Two runs writing one target at once shared its temporary file, and each failed in turn
    /// with a message about a broken index. The second is now refused before it starts, saying
    /// why; once the first is done, the target can be written again. A temporary file that a
    /// killed run left (no one holds it) is replaced as before.
    @Test func aSecondWriterOfOneTargetIsRefused() throws {
        let target = path("out.m4a")
        let first = output(target)
        try first.prepare()
        let refused = message { try output(target).prepare() }
        #expect(refused?.contains("another run is writing it now") == true, "\(refused ?? "accepted")")
        #expect(FileManager.default.fileExists(atPath: first.temporary.path))  // the first's is left alone
        try Data("first".utf8).write(to: first.temporary)
        try first.commit()
        try write("second", to: output(target))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "second")

        // Another process that holds the temporary file's lock (for 5 s): refused in the same way.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = ["-o", first.temporary.path, "sleep", "5"]
        try holder.run()
        var held = false
        for _ in 0..<200 where !held {
            let fd = open(first.temporary.path, O_RDONLY)
            if fd >= 0 {
                held = flock(fd, LOCK_EX | LOCK_NB) != 0
                if !held { flock(fd, LOCK_UN) }
                close(fd)
            }
            if !held { usleep(20_000) }
        }
        #expect(held)
        let other = message { try output(target).prepare() }
        #expect(other?.contains("another run is writing it now") == true, "\(other ?? "accepted")")
        holder.waitUntilExit()

        // What the holder left, once it has gone, is replaced.
        try write("third", to: output(target))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "third")
        #expect(!FileManager.default.fileExists(atPath: first.temporary.path))
    }
}
