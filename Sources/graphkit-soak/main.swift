import Foundation
import GraphKit
import GraphKitTesting
import Nodes

// Runs many small graphs in one process, through the library, and checks that nothing
// accumulates: open file descriptors and threads return to their counts after a warm-up, RSS
// grows by less than the limit, and every node object is deallocated once its run is released.
//
//   graphkit-soak [RUNS] [--rss-limit-mb N]
//
// Prints one JSON object with the figures, and exits 1 when a check fails. It runs alone in its
// process so that nothing else opens files or starts threads meanwhile
// (Tests/GraphKitRuntimeTests/SoakTests.swift runs it).

struct Weak { weak var object: AnyObject? }

let arguments = CommandLine.arguments.dropFirst()
let runs = arguments.first.flatMap { Int($0) } ?? 1000
let rssLimitMB = arguments.firstIndex(of: "--rss-limit-mb").flatMap { i in arguments.dropFirst(i - arguments.startIndex + 1).first.flatMap { Double($0) } } ?? 5

func openFileDescriptors() -> Int {
    guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    guard let logs = sanitizerLogPath else { return fds.count }
    return fds.filter { fd in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)") else { return true }
        return !target.hasPrefix(logs) && !target.hasPrefix("pipe:")
    }.count
}

/// Under a sanitizer (`make test-sanitize`), where it writes its reports (its options'
/// `log_path`). The sanitizer opens that file at its first report, and pipes to the symbolizer
/// it starts to name the report's frames: descriptors of its own, left out of the count then
/// (no GraphKit run opens a pipe).
let sanitizerLogPath: String? = ["TSAN_OPTIONS", "ASAN_OPTIONS"].lazy.compactMap { name -> String? in
    guard let options = ProcessInfo.processInfo.environment[name] else { return nil }
    return options.split(separator: ":").first { $0.hasPrefix("log_path=") }.map { String($0.dropFirst("log_path=".count)) }
}.first
/// The process's threads by name, less libdispatch's workers (named `…qos…`): Foundation's
/// `Process`, which writes the test media, starts those, and libdispatch retires them on its
/// own schedule; GraphKit starts none.
func threadNames() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).map {
        ((try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }.filter { !$0.contains("qos") }.sorted()
}
func threads() -> Int { threadNames().count }

/// Ends the threads GStreamer and GLib keep idle for later runs, then waits until the thread
/// count has stopped changing (threads told to stop end a moment later): at most 5 s, a guard.
func settledThreadCount() -> Int {
    GStreamer.stopIdleStreamingThreads()
    var last = threads(), steadySince = Date()
    let deadline = Date().addingTimeInterval(5)
    while Date() < deadline {
        usleep(10_000)
        let now = threads()
        if now != last { last = now; steadySince = Date() }
        if Date().timeIntervalSince(steadySince) >= 0.2 { break }
    }
    return last
}
/// Resident memory after glibc has handed back the free pages it caches (malloc_trim): freed
/// memory kept in the allocator's per-thread arenas, whose number and fill depend on how threads
/// happened to interleave (a loaded machine moved it by 3 MB), is not memory the runs kept.
func residentKB() -> Int {
    // malloc.h is not in Swift's Glibc module: found at run time.
    if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    return -1
}

let folder = try TestMedia.temporaryFolder()
let wav = folder.appendingPathComponent("in.wav").path
try TestMedia.writeWAV(wav, seconds: 0.2, sampleRate: 8_000, channels: 2)
// Bytes no demuxer recognises (a WAV header followed by noise would be valid PCM).
let damaged = folder.appendingPathComponent("damaged.wav").path
try Data((0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 7919) >> 3) }).write(to: URL(fileURLWithPath: damaged))
let loader = GraphLoader(registry: .builtIn)

enum Kind: CaseIterable { case transcode, waveform, appSource, failing, cancelled }

func graph(_ kind: Kind, _ i: Int) throws(GraphError) -> Graph {
    let out = folder.appendingPathComponent("out\(i % 4)").path
    switch kind {
    case .transcode:
        return try loader.load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
              "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "\(out).m4a" } } },
              "edges": ["src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> file.audio"] }
            """)
    case .waveform:
        return try loader.load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
              "wave": { "type": "analysis.waveform", "params": { "samplesPerPixel": 64, "json": "\(out).json" } } },
              "edges": ["src.out -> dec.in", "dec.audio -> wave.in"] }
            """)
    case .appSource:
        return try loader.load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "gain": { "type": "effect.gain", "params": { "db": -6 } },
              "drain": { "type": "sink.app" } }, "edges": ["feed.out -> gain.in", "gain.out -> drain.in"] }
            """)
    case .failing:
        return try loader.load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(damaged)" } }, "dec": { "type": "decode" },
              "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "\(out)-bad.m4a" } } },
              "edges": ["src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> file.audio"] }
            """)
    case .cancelled:
        return try loader.load(json: """
            { "version": 1, "nodes": { "mic": { "type": "capture.audio", "params": { "duration": 0 } }, "aac": { "type": "encode.aac" },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)-cancelled.m4a" } } },
              "edges": ["mic.out -> aac.in", "aac.out -> file.audio"] }
            """)
    }
}

/// One run of `kind`; returns weak references to its nodes (to be nil once the run is released)
/// and what went differently from what the kind expects.
func runOnce(_ kind: Kind, _ i: Int) -> (nodes: [Weak], problem: String?) {
    do {
        let run = try GraphRun(try graph(kind, i))
        let nodes = run.graph.nodes.map { Weak(object: run.node($0.id)) }
        try run.start()
        let report: RunReport
        switch kind {
        case .appSource:
            let input = try run.input("feed"), output = try run.output("drain")
            for n in 0..<3 {
                try input.appendImmediately(TestMedia.pcm(frames: 256) { frame, _ in Int16(truncatingIfNeeded: frame * 10 + n) }[0])
            }
            input.markAsFinished()
            var pulled = 0
            while output.copyNextSampleBuffer() != nil { pulled += 1 }
            report = run.wait()
            if pulled < 1 { return (nodes, "app source: pulled \(pulled) buffers") }
        case .cancelled:
            run.cancel()
            report = run.wait()
        default:
            report = run.wait()
        }
        let expected: RunStatus = kind == .failing ? .failed : kind == .cancelled ? .cancelled : .completed
        if report.status != expected {
            return (nodes, "\(kind): \(report.status) (\(report.error?.description ?? "no error")), expected \(expected)")
        }
        return (nodes, nil)
    } catch {
        return ([], "\(kind): \(error)")
    }
}

// Warm-up: every kind a few times, so that one-time costs (plugin loading, GStreamer's thread
// pools, caches) are paid before the counts are taken.
var problems: [String] = []
for i in 0..<(Kind.allCases.count * 4) {
    if let p = runOnce(Kind.allCases[i % Kind.allCases.count], i).problem { problems.append("warm-up: " + p) }
}
let threads0 = settledThreadCount()
let names0 = threadNames()
let (fds0, rss0) = (openFileDescriptors(), residentKB())
var undeallocated = 0
for i in 0..<runs {
    let kind = Kind.allCases[i % Kind.allCases.count]
    let (nodes, problem) = runOnce(kind, i)
    if let problem, problems.count < 20 { problems.append("run \(i): \(problem)") }
    let alive = nodes.filter { $0.object != nil }.count
    if alive > 0 {
        undeallocated += alive
        if problems.count < 20 { problems.append("run \(i) (\(kind)): \(alive) node objects still alive after the run was released") }
    }
}
let threads1 = settledThreadCount()
let (fds1, rss1) = (openFileDescriptors(), residentKB())
let growthMB = Double(rss1 - rss0) / 1024
if fds1 != fds0 { problems.append("open file descriptors: \(fds0) before, \(fds1) after") }
if threads1 != threads0 { problems.append("threads: \(threads0) before (\(names0.joined(separator: ", "))), \(threads1) after (\(threadNames().joined(separator: ", ")))") }
if growthMB >= rssLimitMB { problems.append("RSS grew by \(String(format: "%.1f", growthMB)) MB (limit \(rssLimitMB))") }
try? FileManager.default.removeItem(at: folder)

let summary: JSONValue = [
    "runs": .number(Double(runs)), "fileDescriptors": [.number(Double(fds0)), .number(Double(fds1))],
    "threads": [.number(Double(threads0)), .number(Double(threads1))],
    "rssKB": [.number(Double(rss0)), .number(Double(rss1))], "undeallocatedNodes": .number(Double(undeallocated)),
    "problems": .array(problems.map { .string($0) }),
]
print(summary.description)
exit(problems.isEmpty ? 0 : 1)
