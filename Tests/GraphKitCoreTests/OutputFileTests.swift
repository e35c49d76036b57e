import Foundation
import Glibc
import GraphKit
import GraphKitTesting
import Testing

/// The outputs' rule (a temporary file beside the target, renamed over it when complete) on
/// targets that are not plain new files: a device or a pipe, a symbolic link, a name near the
/// file system's limit, a target another run is writing at the same time; and against whoever
/// else can write the folder, replacing names while the run writes.
@Suite(.timeLimit(.minutes(10))) struct OutputFileTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func output(_ path: String) -> OutputFile { OutputFile(path: path, location: "nodes.file.params.path", node: "file") }

    /// Writes `text` through the rule: prepare, write through the descriptor, commit.
    func write(_ text: String, to file: OutputFile) throws {
        try file.prepare()
        try file.write(Array(text.utf8))
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

    /// Runs writing into the same missing folders at once (a batch's workers) all succeed:
    /// each makes the folders or finds them made by another, however their steps interleave.
    /// A worker that found a folder missing, then found it made by another before it looked
    /// again, failed "cannot open the folder …: No such file or directory" (seen in a batch
    /// test under `stress --cpu 2`).
    @Test func runsMakingTheSameFoldersAtOnceAllSucceed() throws {
        let threads = 8
        for round in 0..<1500 {
            let base = folder.appendingPathComponent("r\(round)/a/b/c/d/e").path
            let start = DispatchSemaphore(value: 0), done = DispatchGroup()
            let failures = Guarded<[String]>([])
            for t in 0..<threads {
                DispatchQueue.global().async(group: done) {
                    start.wait()
                    do { try write("\(t)", to: output("\(base)/\(t).txt")) } catch { failures.withLock { $0.append("\(error)") } }
                }
            }
            for _ in 0..<threads { start.signal() }
            done.wait()
            #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
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

    /// A symbolic link at the output's name is refused (73, naming the output and where the
    /// link leads), as is one whose target is not made yet: anyone who can write the folder
    /// could plant it and choose which file a root run replaces. The file it names, and the
    /// link, stay as they were; nothing is made beside them. (`--follow-symlinks` writes
    /// through: RunCommandTests.followSymlinksWritesThroughALinkOnRequest.)
    @Test func aLinkAtTheNameIsRefused() throws {
        let victim = path("victim"), link = path("link.m4a")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let refused = message { try write("new", to: output(link)) }
        #expect(refused?.contains("cannot write \"\(link)\": it is a symbolic link (to \"\(victim)\")") == true, "\(refused ?? "accepted")")
        #expect(refused?.contains("--follow-symlinks") == true)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == victim)

        let dangling = path("later.m4a")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "made.m4a")
        #expect(message { try write("made", to: output(dangling)) }?.contains("it is a symbolic link") == true)
        #expect(!FileManager.default.fileExists(atPath: path("made.m4a")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["later.m4a", "link.m4a", "victim"])
    }

    /// What sits under the temporary name and was not left by a run (a link to another file, a
    /// named pipe) is neither followed, opened nor removed: the output is refused, naming it.
    @Test func aLinkOrAPipeAtTheTemporaryNameIsRefused() throws {
        let victim = path("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let target = path("out.json")
        try FileManager.default.createSymbolicLink(atPath: path(".out.json.partial"), withDestinationPath: victim)
        let link = message { try write("x", to: output(target)) }
        #expect(link?.contains("its temporary name \"\(folder.path)/.out.json.partial\" is a symbolic link, which no run made") == true,
                "\(link ?? "accepted")")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        try FileManager.default.removeItem(atPath: path(".out.json.partial"))
        #expect(mkfifo(path(".out.json.partial"), 0o644) == 0)
        let pipe = message { try write("x", to: output(target)) }  // would block for ever if it opened the pipe
        #expect(pipe?.contains("is a named pipe, which no run made") == true, "\(pipe ?? "accepted")")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    /// Whoever can write the folder may replace the temporary file during the run (with a link
    /// to another file, a pipe): the writes still go into the file the run made, through its
    /// descriptor, and the rename is refused (73) since the name no longer holds that file. A
    /// link or a pipe put at the final name meanwhile is refused the same way. The file a link
    /// names is never touched.
    @Test(arguments: ["temporary link", "temporary pipe", "final link", "final pipe"])
    func namesReplacedDuringTheRunAreNeverFollowed(_ attack: String) throws {
        let victim = path("victim")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let target = path("out.png"), temporary = path(".out.png.partial")
        let file = output(target)
        try file.prepare()
        try file.write(Array("half".utf8))
        let name = attack.hasPrefix("temporary") ? temporary : target
        let planted = path("planted")
        if attack.hasSuffix("link") {
            try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        } else {
            #expect(mkfifo(planted, 0o644) == 0)
        }
        #expect(rename(planted, name) == 0)  // atomically, over the run's own file when it is the temporary one
        try file.write(Array(" and the rest".utf8))
        let refused = message { try file.commit() }
        #expect(refused?.contains("cannot move the finished file to \"\(target)\"") == true, "\(refused ?? "accepted")")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        var info = stat()
        #expect(lstat(name, &info) == 0 && info.st_mode & S_IFMT == (attack.hasSuffix("link") ? S_IFLNK : S_IFIFO), "what was planted stays")
        if attack.hasPrefix("final") {
            #expect(!FileManager.default.fileExists(atPath: temporary), "the run's own temporary file is removed")
        }
    }

    /// Files that appear together (a group of pictures and a file beside them, as thumbnails and
    /// their sprite sheet): every name is checked before the first rename, so a pipe planted at
    /// the single file's name during the run fails them all, and the group's earlier files stay.
    @Test func aGroupAndAFileAreCheckedBeforeEitherIsRenamed() throws {
        let pictures = path("pictures")
        try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: pictures + "/1.jpg"))
        let group = OutputFileGroup(folder: pictures, location: "folder", node: "thumbs")
        try group.prepare(stem: "thumbnails")
        try group.add("1.jpg", Array("new".utf8))
        let sprite = output(path("sprite.jpg"))
        try sprite.prepare()
        try sprite.write(Array("sheet".utf8))
        #expect(mkfifo(path("sprite.jpg"), 0o644) == 0)  // planted during the run
        try group.checkCommit()
        let refused = message { try sprite.checkCommit() }
        #expect(refused?.contains("cannot move the finished file to \"\(path("sprite.jpg"))\": it became a named pipe") == true, "\(refused ?? "accepted")")
        group.discard()
        sprite.discard()
        #expect(try String(contentsOfFile: pictures + "/1.jpg", encoding: .utf8) == "earlier")
        #expect(try FileManager.default.contentsOfDirectory(atPath: pictures) == ["1.jpg"])
        #expect(!FileManager.default.fileExists(atPath: path(".sprite.jpg.partial")))
    }

    /// A staging folder a killed run left (nobody holds it) goes with the next commit of a group
    /// of that stem; one a running group holds, and another stem's, stay.
    @Test func aKilledGroupsStagingFolderGoesWithTheNextCommit() throws {
        let pictures = path("pictures"), fm = FileManager.default
        let killed = pictures + "/.thumbnails-1234abcd.partial", held = pictures + "/.thumbnails-5678.partial"
        let other = pictures + "/.sprites-1234abcd.partial"
        for folder in [killed, held, other] {
            try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("half".utf8).write(to: URL(fileURLWithPath: folder + "/1.jpg"))
        }
        let lock = open(held, O_RDONLY | O_DIRECTORY)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        usleep(50_000)  // file times tick with the kernel's clock (every few ms): the killed run was before this one
        let group = OutputFileGroup(folder: pictures, location: "folder", node: "thumbs")
        try group.prepare(stem: "thumbnails")
        try group.add("1.jpg", Array("new".utf8))
        try group.commit()
        let left = try fm.contentsOfDirectory(atPath: pictures).sorted()
        #expect(left == [".sprites-1234abcd.partial", ".thumbnails-5678.partial", "1.jpg"], "\(left)")
        #expect(try String(contentsOfFile: pictures + "/1.jpg", encoding: .utf8) == "new")
    }

    /// A folder moved away during the run, and a link put in its place, does not lead the rename
    /// there: refused (73), and nothing appears where the link leads.
    @Test func aFolderReplacedByALinkDuringTheRunIsRefused() throws {
        let outputs = folder.appendingPathComponent("out"), elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        let file = output(outputs.appendingPathComponent("a.json").path)
        try file.prepare()  // makes out/
        try file.write(Array("{}".utf8))
        #expect(rename(outputs.path, path("moved")) == 0)
        try FileManager.default.createSymbolicLink(atPath: outputs.path, withDestinationPath: elsewhere.path)
        let refused = message { try file.commit() }
        #expect(refused?.contains("was moved or replaced while the run wrote it") == true, "\(refused ?? "accepted")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: path("moved")) == [])
    }

    /// A link on the way to the output's folder is followed when root or this user made it (its
    /// target was chosen by one of them); another user's link there is refused, since that user
    /// could point it anywhere. Root only: only root can give a link to another user.
    @Test(.enabled(if: geteuid() == 0, "giving a link to another user needs root"))
    func anotherUsersLinkInTheFolderPathIsRefused() throws {
        let victimFolder = folder.appendingPathComponent("etc")
        try FileManager.default.createDirectory(at: victimFolder, withIntermediateDirectories: false)
        let mine = path("mine"), theirs = path("theirs")
        try FileManager.default.createSymbolicLink(atPath: mine, withDestinationPath: victimFolder.path)
        try FileManager.default.createSymbolicLink(atPath: theirs, withDestinationPath: victimFolder.path)
        #expect(lchown(theirs, 65534, 65534) == 0)
        let refused = message { try write("x", to: output(theirs + "/passwd")) }
        #expect(refused?.contains("\"\(theirs)\" is a symbolic link owned by another user (uid 65534)") == true, "\(refused ?? "accepted")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victimFolder.path) == [])
        try write("mine", to: output(mine + "/own.json"))
        #expect(try String(contentsOfFile: victimFolder.appendingPathComponent("own.json").path, encoding: .utf8) == "mine")
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
        try first.write(Array("first".utf8))
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
