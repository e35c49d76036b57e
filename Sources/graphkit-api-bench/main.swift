// The Swift API's benchmarks (scripts/bench.py, job swiftapi): a program as an app using
// GraphKit would be, without Foundation (which costs a process about 7 MB and its start-up), so
// that the figures are GraphKit's.
//
//   graphkit-api-bench adaptor OUT.mp4 [bgra|i420]
//   graphkit-api-bench reader FILE.wav
//   graphkit-api-bench start          (GStreamer started, nothing read: the process's fixed cost)
import Glibc
import GraphKit

do {
    switch CommandLine.arguments.dropFirst().first {
    case "adaptor":
        try await benchmarkAdaptor(Array(CommandLine.arguments.dropFirst(2)))
    case "reader":
        try benchmarkReader(Array(CommandLine.arguments.dropFirst(2)))
    case "start":
        try GStreamer.start()
    default:
        print("usage: graphkit-api-bench adaptor OUT.mp4 [bgra|i420] | reader FILE | start")
        exit(64)
    }
} catch {
    print("error: \(error)")
    exit(70)
}
