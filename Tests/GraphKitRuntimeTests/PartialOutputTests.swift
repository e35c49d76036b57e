import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Testing
import TestSupport

/// However a run ends in the process (a node or the caller's code throws, a task is cancelled,
/// the run is let go without waiting, the start fails), no `.partial` file is left beside the
/// target and nothing appears under the target's name. Each test first checks that the
/// temporary file existed while the run was alive, so that its absence afterwards means it was
/// removed, not that it was never written.
@Suite(.media) struct PartialOutputTests {
    /// A folder of its own, and the graph `feed` (PCM from code) → AAC → `file.m4a` in it.
    /// With `blocked`, the MP4 also has a video input that never receives anything: the muxer
    /// waits for it, so the audio backs up and an append must wait.
    struct Setup {
        let folder: URL
        var target: String { folder.appendingPathComponent("file.m4a").path }
        var partial: String { folder.appendingPathComponent(".file.m4a.partial").path }

        init() throws { folder = try TestMedia.temporaryFolder() }

        func graph(blocked: Bool = false, registry: NodeRegistry = .builtIn, middle: String? = nil) throws -> Graph {
            let video = blocked ? #", "pictures": { "type": "source.app" }, "h264": { "type": "encode.h264" }"# : ""
            let videoEdges = blocked ? #", "pictures.out -> h264.in", "h264.out -> file.video""# : ""
            let audioPath = middle.map { _ in #""feed.out -> mid.in", "mid.out -> aac.in""# } ?? #""feed.out -> aac.in""#
            let mid = middle.map { #", "mid": \#($0)"# } ?? ""
            return try GraphLoader(registry: registry).load(json: """
                { "version": 1, "nodes": { "feed": { "type": "source.app", "params": { "maxBuffers": 4 } },
                  "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "\(target)" } }\(video)\(mid) },
                  "edges": [ \(audioPath), "aac.out -> file.audio"\(videoEdges) ] }
                """)
        }

        /// What is in the folder: nothing, once a run that did not complete has ended.
        var leftovers: [String] { (try? FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()) ?? ["(no folder)"] }
        var partialExists: Bool { FileManager.default.fileExists(atPath: partial) }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// A run held weakly, so a guard can end a run that hangs without keeping it alive.
    final class WeakRun: @unchecked Sendable {
        private let lock = NSLock()
        private weak var value: GraphRun?
        func set(_ run: GraphRun) { lock.withLock { value = run } }
        var run: GraphRun? { lock.withLock { value } }
    }

    /// Cancels `run` if it has not ended within the guard limit, so that a test whose mechanism
    /// fails ends instead of hanging. Cancel the returned task once the run has ended; its value
    /// says whether the guard had to step in (which fails the test: see ``expectNoGuard``).
    static func guardRun(_ run: @escaping @Sendable () -> GraphRun?) -> Task<Bool, Never> {
        Task.detached {
            guard (try? await Task.sleep(for: .seconds(120))) != nil else { return false }
            guard let run = run(), !run.isFinished else { return false }
            run.cancel()
            return true
        }
    }

    static func expectNoGuard(_ guardTask: Task<Bool, Never>, _ what: String) async {
        guardTask.cancel()
        let fired = await guardTask.value
        #expect(!fired, "\(what): the run had not ended within the guard limit; the guard cancelled it")
    }

    /// A Swift node that throws on its third buffer fails the run; the sink removes its file.
    @Test(.timeLimit(.minutes(10)))
    func aNodeThatThrowsLeavesNoPartialFile() throws {
        let setup = try Setup()
        defer { setup.remove() }
        var registry = NodeRegistry.builtIn
        registry.register(GraphRunTests.Fails.self)
        let run = try GraphRun(try setup.graph(registry: registry, middle: #"{ "type": "test.fails", "params": { "at": 3 } }"#))
        try run.start()
        #expect(setup.partialExists)
        let input = try run.input("feed")
        for b in TestMedia.sine(seconds: 0.5) {
            do { try input.appendWaiting(b) } catch { break }  // refused once the node has failed
        }
        input.markAsFinished()
        let report = run.wait()
        #expect(report.status == .failed)
        #expect(report.error?.node == "mid" && report.error?.message == "buffer 3 refused", "\(String(describing: report.error))")
        #expect(report.outputs.first?.status == .failed)
        #expect(setup.leftovers == [])
    }

    /// Code that throws while it feeds a run it started lets the run go: the run is cancelled
    /// and its file removed, as the error unwinds.
    @Test(.timeLimit(.minutes(10)))
    func codeThatThrowsWhileFeedingLeavesNoPartialFile() async throws {
        struct Abandoned: Error {}
        let setup = try Setup()
        defer { setup.remove() }
        let graph = try setup.graph()
        let held = WeakRun()
        let body = Task { () async throws -> Bool in
            let run = try GraphRun(graph)
            held.set(run)
            try run.start()
            let input = try run.input("feed")
            for b in TestMedia.sine(seconds: 0.3) { try await input.append(b) }
            let existed = setup.partialExists
            if existed { throw Abandoned() }
            return existed
        }
        let guardTask = Self.guardRun { held.run }
        let result = await body.result
        await Self.expectNoGuard(guardTask, "a body that threw")
        #expect(throws: Abandoned.self) { try result.get() }  // and so the partial file existed
        #expect(held.run == nil, "the run outlived the code that held it")
        #expect(setup.leftovers == [])
    }

    /// A run released without wait() or cancel() is cancelled: its file is removed by the time
    /// the last reference goes.
    @Test(.timeLimit(.minutes(10)))
    func releasingARunWithoutWaitingRemovesItsFile() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let graph = try setup.graph()
        let held = WeakRun()
        func startFeedAndLetGo() throws -> Bool {
            let run = try GraphRun(graph)
            held.set(run)
            try run.start()
            let input = try run.input("feed")
            for b in TestMedia.sine(seconds: 0.3) { try input.appendWaiting(b) }
            return setup.partialExists
        }
        #expect(try startFeedAndLetGo())
        if let run = held.run {
            Issue.record("the run outlived every reference to it; cancelling it")
            run.cancel()
            _ = run.wait()
        }
        #expect(setup.leftovers == [])
    }

    /// A task awaiting report() that is cancelled cancels the run (as cancelling a task
    /// awaiting a download cancels the download): the report says so and the file is removed.
    @Test(.timeLimit(.minutes(10)))
    func cancellingATaskAwaitingTheReportCancelsTheRun() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let run = try GraphRun(try setup.graph())
        try run.start()
        let input = try run.input("feed")
        for b in TestMedia.sine(seconds: 0.3) { try await input.append(b) }
        #expect(setup.partialExists)
        // The input is never finished: the run would go on for ever.
        let waiting = Task { await run.report() }
        let guardTask = Self.guardRun { run }
        waiting.cancel()
        let report = await waiting.value
        await Self.expectNoGuard(guardTask, "a cancelled report()")
        #expect(report.status == .cancelled)
        #expect(report.error?.code == .cancelled)
        #expect(report.outputs.first?.status == .cancelled)
        #expect(setup.leftovers == [])
        // A task cancelled before it asks for the report gets it at once too.
        let late = Task { () -> RunReport in
            withUnsafeCurrentTask { $0?.cancel() }
            return await run.report()
        }
        #expect(await late.value.status == .cancelled)
    }

    /// A task suspended in append() (the graph is full) that is cancelled stops waiting and
    /// throws a cancellation; the run it started and let go is cancelled and its file removed.
    @Test(.timeLimit(.minutes(10)))
    func cancellingATaskSuspendedInAppendLeavesNoPartialFile() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let graph = try setup.graph(blocked: true)
        let held = WeakRun()
        let (suspended, signal) = AsyncStream.makeStream(of: Void.self)
        let body = Task { () async -> GraphError? in
            do {
                let run = try GraphRun(graph)
                held.set(run)
                try run.start()
                let input = try run.input("feed")
                for b in TestMedia.sine(seconds: 30) {
                    if !input.isReadyForMoreMediaData, setup.partialExists { signal.yield() }  // this append waits
                    try await input.append(b)
                }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        let guardTask = Self.guardRun { held.run }
        var iterator = suspended.makeAsyncIterator()
        await iterator.next()  // the graph is full and the file exists: the body waits in append
        body.cancel()
        let error = await body.value
        await Self.expectNoGuard(guardTask, "a cancelled append()")
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(error?.node == "feed", "\(String(describing: error))")
        #expect(held.run == nil, "the run outlived the task that held it")
        #expect(setup.leftovers == [])
    }

    /// A start that fails after one sink has created its temporary file (the second sink's
    /// target is a folder) leaves nothing of the first.
    @Test(.timeLimit(.minutes(10)))
    func aFailedStartLeavesNoPartialFile() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let folderTarget = setup.folder.appendingPathComponent("taken")
        try FileManager.default.createDirectory(at: folderTarget, withIntermediateDirectories: false)
        // Nodes prepare in the graph's order: "a" makes its temporary file, then "b" fails.
        let run = try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "aac": { "type": "encode.aac" },
              "a": { "type": "sink.mp4", "params": { "path": "\(setup.target)" } },
              "b": { "type": "sink.mp4", "params": { "path": "\(folderTarget.path)" } } },
              "edges": [ "feed.out -> aac.in", "aac.out -> a.audio", "aac.out -> b.audio" ] }
            """))
        let order = run.graph.nodes.map(\.id)
        #expect(order.firstIndex(of: "a")! < order.firstIndex(of: "b")!, "\(order)")
        #expect {
            try run.start()
        } throws: { error in
            (error as? GraphError)?.code == .outputUnwritable && (error as? GraphError)?.node == "b"
        }
        #expect(run.wait().status == .failed)
        #expect(setup.leftovers == ["taken"])
    }
}
