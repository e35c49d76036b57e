import GraphKitCore
import GraphKitRuntime

/// Where a video file's scenes begin, for pictures placed at its cuts rather than at fixed times
/// (`analysis.thumbnails` with `at` `scenes`): one pass over its frames (`source.file` →
/// `decode`, I420 → `sink.app`) through ``SceneDetector``, ffmpeg `scdet`'s rule. Cancellable
/// from any thread (``cancel()``): the pass stops at its next frame.
package final class SceneScan: Sendable {
    private struct State {
        var run: GraphRun?
        var cancelled = false
    }
    private let state = Guarded(State())

    package init() {}

    /// The cuts of the file at `path` whose score reaches `threshold` (0 to 100), in time order.
    /// Throws the pass's error naming the file, or `cancelled` after ``cancel()``.
    package func cuts(of path: String, threshold: Double) throws(GraphError) -> [SceneScore] {
        var b = GraphBuilder(name: "scenes", description: "the scene cuts of \(path)")
        let file = b.add("file", FileSourceNode.self) { $0[\.path] = path }
        let decode = b.add("decode", DecodeNode.self) { $0[\.pixelFormat] = .i420 }
        let sink = b.add("out", AppSinkNode.self) { $0[\.maxBuffers] = 4 }
        b.connect(file.output(), to: decode.input())
        b.connect(decode.output("video"), to: sink.input())
        let run = try GraphRun(try b.build(registry: .builtIn))
        let cancelled = GraphError(.cancelled, at: path, "the search for scene cuts was cancelled")
        guard state.withLock({ s in
            guard !s.cancelled else { return false }
            s.run = run
            return true
        }) else { throw cancelled }
        defer {
            run.cancel()
            _ = run.wait()
            state.withLock { $0.run = nil }
        }
        try run.start()
        let output = try run.output("out")
        var detector = SceneDetector(threshold: threshold)
        var input = VideoAnalysisInput()
        var format: MediaFormat?
        while let frame = output.copyNextSampleBuffer() {
            if let f = frame.format, f != format {
                try input.setFormat(f, node: "the scene search")
                format = f
            }
            let (luma, time, duration) = try input.read(frame)
            detector.add(luma, time: time, duration: duration)
        }
        if state.withLock({ $0.cancelled }) { throw cancelled }
        let report = run.wait()
        if report.status == .failed, let error = report.error { throw error }
        return detector.cuts
    }

    /// Stops the pass under way (it throws `cancelled`) and any asked for after.
    package func cancel() {
        let run = state.withLock { s in
            s.cancelled = true
            return s.run
        }
        run?.cancel()
    }

    /// `count` times for pictures of a file lasting `duration`: its start, then its strongest
    /// cuts (highest score first, at most `count` − 1); when there are fewer cuts than that, the
    /// rest at evenly spaced times (as without cuts) not within half a spacing of a time chosen.
    /// In time order.
    package static func times(cuts: [SceneScore], count: Int, duration: MediaTime) -> [MediaTime] {
        guard count > 0 else { return [] }
        let end = duration.seconds
        var chosen: [Double] = [0]
        let strongest = cuts.filter { $0.time > 0 && $0.time < end }.sorted { $0.score != $1.score ? $0.score > $1.score : $0.time < $1.time }
        for cut in strongest.prefix(count - 1) { chosen.append(cut.time) }
        chosen.sort()
        if chosen.count < count {
            let spacing = end / Double(count)
            var fills: [Double] = []
            var spare: [Double] = []
            for i in 1..<count {
                let t = spacing * Double(i)
                // The nearest chosen time, by binary search in the sorted times.
                var lo = 0, hi = chosen.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if chosen[mid] < t { lo = mid + 1 } else { hi = mid }
                }
                let near = [lo - 1, lo].filter { chosen.indices.contains($0) }.map { abs(chosen[$0] - t) }.min() ?? .infinity
                if near >= spacing / 2 { fills.append(t) } else { spare.append(t) }
            }
            let missing = count - chosen.count
            chosen += fills.prefix(missing)
            chosen += spare.prefix(max(0, missing - fills.count))
            chosen.sort()
        }
        return chosen.map { MediaTime(seconds: $0) }
    }
}
