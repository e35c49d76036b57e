import Foundation
import GraphKit
import Nodes
import Glibc

/// One input: the bytes of a media file (the seeds are small WAV, MP3, FLAC, Ogg, M4A, MP4 and
/// Matroska files), written to a temporary file and decoded by `source.file → decode → sink.app` (audio
/// and video), every sample pulled, as an application reading a file does (AVAssetReader).
///
/// The decoded audio also feeds `analysis.waveform`, which writes a JSON file: success means a
/// complete output (issue 27).
///
/// A finding is a crash, a leak, a run that does not end within FUZZ_RUN_SECONDS (default 10;
/// the run is cancelled and the input kept as a crash), an end that is neither a completed
/// run nor a GraphError of a damaged file (70) or a missing GStreamer plugin (69) naming its
/// place, a completed run whose JSON is missing or holds no peaks, and a failed one that left
/// the JSON or its temporary file behind.
let limit = getenv("FUZZ_RUN_SECONDS").flatMap { Double(String(cString: $0)) } ?? 10
let folder: String = {
    var template = Array("/tmp/graphkit-fuzz-decode-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot make a temporary folder") }
    return String(cString: made)
}()
let loader = GraphLoader(registry: .builtIn)
/// The decode settings, chosen by the input's length so that each input always runs the same
/// way: the defaults; resampled and mixed down; the decoder's own sample format, planar video.
let variants = [
    #"{}"#,
    #"{ "sampleRate": 22050, "channels": 1, "autorotate": false }"#,
    #"{ "sampleFormat": "auto", "pixelFormat": "i420" }"#,
]
/// Once, before the first input: GraphKit's log down to errors, and the folder removed at exit
/// (each input's file is removed after its run).
let setUp: Void = {
    GraphKitLogging.bootstrapStandardError(level: .error)
    atexit { rmdir(folder) }
}()
/// FUZZ_VERBOSE=1: each input's outcome on standard error (to look at a corpus with -runs=0).
let verbose = getenv("FUZZ_VERBOSE") != nil

/// The file name's extension from the first bytes, as a user's file would have: some of
/// GStreamer's type finders take it as a hint.
func fileExtension(_ b: [UInt8]) -> String {
    func starts(_ s: String, at offset: Int = 0) -> Bool {
        let m = Array(s.utf8)
        return b.count >= offset + m.count && Array(b[offset..<offset + m.count]) == m
    }
    if starts("RIFF") { return "wav" }
    if starts("fLaC") { return "flac" }
    if starts("OggS") { return "ogg" }
    if starts("ID3") || (b.count > 1 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0) { return "mp3" }
    if starts("ftyp", at: 4) { return starts("M4A", at: 8) ? "m4a" : "mp4" }
    if b.count > 3, b[0] == 0x1A, b[1] == 0x45, b[2] == 0xDF, b[3] == 0xA3 { return "mkv" }
    return "bin"
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = setUp
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A connected output that the file lacks fails the run (by design): video is read from the
    // containers that carry it.
    let ext = fileExtension(bytes), video = ext == "mp4" || ext == "mkv"
    let path = "\(folder)/input.\(ext)", json = "\(folder)/peaks.json"
    write(bytes, to: path)
    defer { unlink(path); unlink(json) }
    let text = """
        { "version": 1, "nodes": {
            "src": { "type": "source.file", "params": { "path": \(JSONValue.string(path)) } },
            "dec": { "type": "decode", "params": \(variants[size % variants.count]) },
            "audio": { "type": "sink.app", "params": { "maxBuffers": 4 } },
            "wave": { "type": "analysis.waveform", "params": { "samplesPerPixel": 64, "json": \(JSONValue.string(json)) } }\(video ? """
            , "video": { "type": "sink.app", "params": { "maxBuffers": 4 } }
            """ : "") },
          "edges": [ "src.out -> dec.in", "dec.audio -> audio.in", "dec.audio -> wave.in"\(video ? #", "dec.video -> video.in""# : "") ] }
        """
    let graph: Graph
    do { graph = try loader.load(json: text) } catch { fatalError("the fuzz graph does not load: \(error)") }
    do {
        let run = try GraphRun(graph)
        let outputs = try (video ? ["audio", "video"] : ["audio"]).map { id throws(GraphError) in try run.output(id) }
        try run.start()
        let start = ContinuousClock.now
        var samples = 0
        // Pull from both outputs until the run is over, as a reader does: a full sink would
        // hold the decoder back.
        while !run.isFinished {
            for o in outputs where o.copyNextSampleBuffer(timeout: 0.002) != nil { samples += 1 }
            if ContinuousClock.now - start > .seconds(limit) {
                run.cancel()
                let cancelled = ContinuousClock.now
                while !run.isFinished, ContinuousClock.now - cancelled < .seconds(5) {
                    for o in outputs { _ = o.copyNextSampleBuffer(timeout: 0.01) }
                }
                fatalError("hang: the run did not end within \(limit) s (\(samples) samples pulled); cancelling it \(run.isFinished ? "ended it" : "did not end it within 5 s")")
            }
        }
        let report = run.wait()
        if verbose { say("\(size) bytes: \(report.status), \(samples) samples; \(report.error.map { "\($0)" } ?? "")") }
        switch (report.status, report.error) {
        case (.completed, nil): checkComplete(json)
        case (.failed, let error?):
            check(error)
            checkNothingLeft(in: folder, besides: path)
        default: fatalError("a run ended \(report.status) with error \(String(describing: report.error))")
        }
    } catch {
        if verbose { say("\(size) bytes: not started: \(error)") }
        check(error)
    }
    return 0
}

/// A damaged file is a failed run (70) or, when its bytes look like a format with no decoder
/// installed, a missing plugin (69); each problem names where (the node, the file).
func check(_ error: GraphError) {
    guard error.code == .runFailed || error.code == .missingPlugin else {
        fatalError("unexpected error code \(error.code.exitStatus): \(error)")
    }
    for p in error.problems where p.location?.isEmpty ?? true {
        fatalError("a problem that names no place: \(p.message)")
    }
}

/// A completed run wrote its JSON, with peaks in it.
func checkComplete(_ json: String) {
    guard let text = try? String(contentsOfFile: json, encoding: .utf8),
          let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
          let data = object["data"] as? [Any], !data.isEmpty else {
        fatalError("a completed run's output \(json) is missing or holds no peaks")
    }
}

/// A failed run left no output and no temporary file: the folder holds the input only.
func checkNothingLeft(in folder: String, besides input: String) {
    let left = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { "\(folder)/\($0)" != input }
    if !left.isEmpty { fatalError("a failed run left \(left) in \(folder)") }
}

func write(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(path)") }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { fatalError("cannot write \(path)") }
        offset += n
    }
}

func say(_ line: String) {
    let text = Array((line + "\n").utf8)
    _ = text.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
}
