import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// analysis.thumbnails on videos ffmpeg makes here, its pictures compared with ffmpeg's own
/// decode of the same frames.
@Suite(.media, .timeLimit(.minutes(10))) struct ThumbnailsNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 8 s of 320x240 H.264 at 25 fps, a keyframe every second (no scene cuts), frame N's luma
    /// 20 + (9N mod 180) plus a left-to-right ramp of 0-19: neighbouring frames differ by 9
    /// levels, so a wrong frame shows, and the ramp shows which way a picture is turned.
    func video(_ name: String = "counter.mp4") throws -> String {
        let p = path(name)
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i",
                                         "color=c=black:s=320x240:r=25:d=8,format=yuv420p,geq=lum='mod(N*9\\,180)+20+X/16':cb=128:cr=128",
                                         "-c:v", "libx264", "-crf", "10", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", p])
        return p
    }

    /// Runs a graph of one analysis.thumbnails node with these parameters (JSON members).
    @discardableResult
    func run(_ params: String) throws -> ThumbnailsNode {
        let graph = try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "thumbs": { "type": "analysis.thumbnails", "params": { "#
                                                             + params + " } } }, \"edges\": [] }")
        let run = try GraphRun(graph)
        _ = try run.run()
        return try #require(run.node("thumbs") as? ThumbnailsNode)
    }

    /// ffmpeg's decode of `arguments` (input options and input) as one raw frame of `format`.
    func raw(_ arguments: [String], _ format: String) throws -> [UInt8] {
        let out = path("frame-\(UUID().uuidString).raw")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y"] + arguments + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", format, out])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// The luma of an image file as ffmpeg reads it (full range, as its luma of a video frame).
    func luma(ofImage file: String) throws -> [UInt8] { try raw(["-i", file], "gray") }

    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }

    static func seconds(_ t: MediaTime) -> String { String(format: "%.3f", t.seconds) }

    /// Five pictures of 8 s at 0, 1.6, 3.2, 4.8, 6.4 s: by default the keyframes at or before
    /// (0, 1, 3, 4, 6 s), with `exact` the frames at the times; each picture's luma within 3 of
    /// ffmpeg's decode of that frame (a neighbouring frame is 9 away), and found by seeking: a
    /// handful of frames decoded a picture, not the file's 200.
    @Test(arguments: [false, true])
    func picturesAreFfmpegsFramesAtTheTimes(exact: Bool) throws {
        let file = try video()
        let out = path("pngs-\(exact)")
        let node = try run(#""path": "\#(file)", "count": 5, "width": 320, "format": "png", "exact": \#(exact), "folder": "\#(out)""#)
        let expected: [Double] = exact ? [0, 1.6, 3.2, 4.8, 6.4] : [0, 1, 3, 4, 6]
        #expect(node.requestedTimes.times.map(\.seconds) == [0, 1.6, 3.2, 4.8, 6.4])
        let pictures = node.pictures
        #expect(pictures.count == 5)
        for (i, picture) in pictures.enumerated() {
            #expect(abs(picture.time.seconds - expected[i]) < 0.001, "picture \(i) at \(picture.time.seconds) s, not \(expected[i]) s")
            let png = "\(out)/thumb-000\(i + 1).png"
            let ours = try luma(ofImage: png)
            let ffmpeg = try raw(["-ss", Self.seconds(picture.time), "-i", file], "gray")
            let difference = Self.meanDifference(ours, ffmpeg)
            #expect(difference < 3, "picture \(i) (\(png)) differs from ffmpeg's frame at \(picture.time.seconds) s by \(difference)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(out)/thumb-0006.png"))
        #expect(node.pipelines == 1, "\(node.pipelines) pipelines for 5 pictures")
        #expect(node.framesDelivered <= 5 * 13, "\(node.framesDelivered) frames decoded for 5 pictures of a 200-frame file")
    }

    /// Three scenes (grey levels 40, 130, 220 with noise, cuts at 2.0 and 3.6 s, key frames only
    /// every 5 s): with `at` `scenes` the pictures are the start and the first frame of each
    /// scene (never the key frame before it, which shows the scene before); five pictures are the
    /// three and two evenly spaced ones away from them.
    @Test func picturesAtSceneCutsAreEachScenesFirstFrame() throws {
        let file = path("scenes.mp4")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i",
                                             "color=c=black:s=160x120:r=25:d=5,format=yuv420p,geq=lum='if(lt(T\\,2)\\,40\\,if(lt(T\\,3.6)\\,130\\,220))+mod(X*7+Y*13+N\\,9)':cb=128:cr=128",
                                             "-c:v", "libx264", "-crf", "12", "-g", "125", "-keyint_min", "125", "-sc_threshold", "0", file])
        let three = try run(#""path": "\#(file)", "count": 3, "at": "scenes", "width": 160, "format": "png", "folder": "\#(path("three"))""#)
        #expect(three.requestedTimes.times.map { ($0.seconds * 1000).rounded() / 1000 } == [0, 2, 3.6])
        #expect(three.pictures.map { ($0.time.seconds * 1000).rounded() / 1000 } == [0, 2, 3.6])
        for (i, level) in [40, 130, 220].enumerated() {
            let mean = try luma(ofImage: path("three/thumb-000\(i + 1).png")).reduce(0) { $0 + Int($1) } / (160 * 120)
            // The scene's mean level (the noise adds 4), limited range as encoded, in the picture's full range.
            let expected = (level + 4 - 16) * 255 / 219
            #expect(abs(mean - expected) < 6, "picture \(i + 1): mean luma \(mean), its scene's is \(expected)")
        }
        let five = try run(#""path": "\#(file)", "count": 5, "at": "scenes", "width": 160, "folder": "\#(path("five"))""#)
        let times = five.requestedTimes.times.map(\.seconds)
        #expect(times.count == 5 && times.contains { abs($0 - 2) < 0.001 } && times.contains { abs($0 - 3.6) < 0.001 }, "\(times)")
        #expect(times == times.sorted())
    }

    @Test func scenesPlaceCountPicturesNotAnInterval() throws {
        let error = #expect(throws: GraphError.self) {
            try run(#""path": "x.mp4", "interval": 2, "at": "scenes", "folder": "\#(path("x"))""#)
        }
        #expect(error?.code == .invalidGraph && error?.message.contains("interval") == true, "\(String(describing: error))")
    }

    /// A video whose track says it is shown turned a quarter: the pictures are turned (240x320,
    /// within 320 wide), as ffmpeg shows it, and so is the sprite sheet's grid.
    @Test func rotationIsApplied() throws {
        let plain = try video()
        let turned = path("turned.mp4")
        // ffmpeg 6 and later: -display_rotation; 5.1 (Debian 12): the rotate tag.
        if (try? TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-display_rotation:v:0", "90", "-i", plain, "-c", "copy", turned])) == nil {
            _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90", turned])
        }
        let out = path("turned")
        let node = try run(#""path": "\#(turned)", "count": 2, "width": 320, "format": "png", "exact": true, "columns": 2, "folder": "\#(out)", "sprite": "\#(out)/sprite.png""#)
        for (i, picture) in node.pictures.enumerated() {
            guard case .rawVideo(let v)? = picture.image.format else { Issue.record("no picture"); continue }
            #expect(v.width == 240 && v.height == 320, "picture \(i) is \(v.width)x\(v.height)")
            let ffmpeg = try raw(["-ss", Self.seconds(picture.time), "-i", turned], "gray")  // ffmpeg turns it by default
            let difference = Self.meanDifference(try luma(ofImage: "\(out)/thumb-000\(i + 1).png"), ffmpeg)
            #expect(difference < 3, "picture \(i) differs from ffmpeg's turned frame by \(difference)")
        }
        #expect(try Self.imageSize(of: "\(out)/sprite.png") == "480x320")
    }

    static func imageSize(of file: String) throws -> String {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", file])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Seven pictures in three columns: a sheet of 3x3 tiles of 160x120, its WebVTT cues one a
    /// picture, from 0 to the end without a gap, each pointing at its tile; every picture also a
    /// JPEG of its own.
    @Test func spriteSheetAndIndexAgree() throws {
        let file = try video()
        let out = path("web")
        let node = try run(#""path": "\#(file)", "count": 7, "columns": 3, "folder": "\#(out)", "sprite": "\#(out)/sprite.jpg", "vtt": "\#(out)/sprite.vtt""#)
        #expect(node.pictures.count == 7)
        #expect(try Self.imageSize(of: "\(out)/sprite.jpg") == "480x360")
        #expect(try Self.imageSize(of: "\(out)/thumb-0007.jpg") == "160x120")
        let text = try String(contentsOfFile: "\(out)/sprite.vtt", encoding: .utf8)
        #expect(text.hasPrefix("WEBVTT\n\n"))
        let cues = text.components(separatedBy: "\n\n").dropFirst().map { $0.split(separator: "\n").map(String.init) }
        #expect(cues.count == 7)
        func ms(_ stamp: String) -> Int {
            let p = stamp.split(whereSeparator: { $0 == ":" || $0 == "." }).compactMap { Int($0) }
            return ((p[0] * 60 + p[1]) * 60 + p[2]) * 1000 + p[3]
        }
        var previousEnd = 0
        for (i, cue) in cues.enumerated() {
            let times = cue[0].components(separatedBy: " --> ")
            #expect(ms(times[0]) == previousEnd, "cue \(i) starts at \(times[0])")
            #expect(ms(times[0]) == Int((node.requestedTimes.times[i].seconds * 1000).rounded()))
            previousEnd = ms(times[1])
            #expect(cue[1] == "sprite.jpg#xywh=\(i % 3 * 160),\(i / 3 * 120),160,120", "cue \(i): \(cue[1])")
        }
        #expect(previousEnd == 8000)
        // The tile is the picture: the sheet's crop against the picture's own file.
        let tile = try raw(["-i", "\(out)/sprite.jpg", "-vf", "crop=160:120:160:120"], "gray")
        #expect(Self.meanDifference(tile, try raw(["-i", "\(out)/thumb-0005.jpg"], "gray")) < 3)
    }

    /// The optional output gives the pictures as frames, one a second, in time order: what an
    /// encoder downstream would take (the files are still written).
    @Test func theOutputGivesThePicturesAsFrames() throws {
        let file = try video()
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "thumbs": { "type": "analysis.thumbnails", "params": { "path": "\(file)", "count": 4, "width": 80, "sprite": "\(path("s.png"))", "format": "png" } },
              "app": { "type": "sink.app" } }, "edges": ["thumbs.out -> app.in"] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("app")
        var frames: [SampleBuffer] = []
        while let frame = output.copyNextSampleBuffer() { frames.append(frame) }
        let report = run.wait()
        #expect(report.status == .completed, "\(report.error?.description ?? "")")
        let node = try #require(run.node("thumbs") as? ThumbnailsNode)
        #expect(frames.count == 4)
        #expect(frames.map { $0.presentationTime?.seconds ?? -1 } == [0, 1, 2, 3])
        for (frame, picture) in zip(frames, node.pictures) {
            #expect(frame.format == .rawVideo(.init(pixelFormat: .bgra, width: 80, height: 60, frameRate: FrameRate(1))))
            var packed = [UInt8]()
            var copy = frame
            try copy.withMutablePixelPlanes { planes in
                for y in 0..<60 {
                    packed += UnsafeRawBufferPointer(start: planes[0].baseAddress + y * planes[0].bytesPerRow, count: 80 * 4)
                }
            }
            #expect(packed == picture.image.bytes)
        }
        #expect(try Self.imageSize(of: path("s.png")) == "320x60")
    }

    /// A run of the most pictures (10,000 of 8 s) with its output pulled: once three pictures
    /// have come out, the pictures are being taken in the run (the output drained meanwhile), and
    /// `stop` and `cancel` each end it within a second (time is what this checks): the picture
    /// under way abandoned. A cancel writes nothing, under the outputs' names or temporary ones;
    /// a stop writes the pictures taken, their sprite sheet and an index whose last cue ends
    /// where the next picture would have been.
    @Test(arguments: [false, true]) func aStopOrCancelEndsALargeCountAtOnce(cancel: Bool) throws {
        let file = try video()
        let out = path(cancel ? "cancelled" : "stopped")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "thumbs": { "type": "analysis.thumbnails", "params": { "path": "\(file)", "count": 10000, "width": 32, "columns": 10,
                "folder": "\(out)", "sprite": "\(out)/sprite.png", "vtt": "\(out)/sprite.vtt", "format": "png" } },
              "app": { "type": "sink.app" } }, "edges": ["thumbs.out -> app.in"] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("app")
        for _ in 0..<3 { #expect(output.copyNextSampleBuffer() != nil) }
        let drained = DispatchGroup()
        DispatchQueue.global().async(group: drained) { while output.copyNextSampleBuffer() != nil {} }
        let asked = ContinuousClock.now
        if cancel { run.cancel() } else { run.stop() }
        let report = run.wait()
        let took = ContinuousClock.now - asked
        #expect(drained.wait(timeout: .now() + 10) == .success)
        #expect(took < .seconds(1), "the run ended \(took) after it was asked to")
        let node = try #require(run.node("thumbs") as? ThumbnailsNode)
        let taken = node.pictures.count
        #expect(taken >= 3 && taken < 10_000)
        let left = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        if cancel {
            #expect(report.status == .cancelled)
            #expect(left.isEmpty, "left behind: \(left)")
            return
        }
        #expect(report.status == .stopped, "\(report.error?.description ?? "")")
        #expect(left.count == taken + 2 && left.contains("thumb-\(String(format: "%05d", taken)).png") && !left.contains { $0.hasPrefix(".") },
                "\(left.count) files for \(taken) pictures: \(left.prefix(5))")
        #expect(report.outputs.count == taken + 2 && report.outputs.allSatisfy { $0.status == .completed })
        let width = min(taken, 10) * 32, height = (taken + 9) / 10 * 24
        #expect(try Self.imageSize(of: "\(out)/sprite.png") == "\(width)x\(height)")
        let cues = try String(contentsOfFile: "\(out)/sprite.vtt", encoding: .utf8).components(separatedBy: "\n\n").dropFirst()
        #expect(cues.count == taken)
        let next = node.requestedTimes.times[taken]
        #expect(cues.last?.contains("--> \(WebVTTIndex.timestamp(next))") == true, "\(cues.last ?? "")")
    }

    /// A file whose media stops halfway (its index first, the rest cut off): the pictures are
    /// taken in the run, so the one past the cut fails the run with the node's own error,
    /// naming the file and the time, and nothing is written.
    @Test func aPictureThatCannotBeTakenFailsTheRunNamingIt() throws {
        let whole = path("whole.mp4")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=8",
                                         "-c:v", "libx264", "-g", "25", "-movflags", "+faststart", whole])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = path("cut.mp4")
        try bytes.prefix(bytes.count * 2 / 5).write(to: URL(fileURLWithPath: cut))
        let out = path("cut-pictures")
        let error = #expect(throws: GraphError.self) { try run(#""path": "\#(cut)", "count": 8, "folder": "\#(out)", "sprite": "\#(out)/sprite.jpg""#) }
        #expect(error?.node == "thumbs")
        #expect(error?.message.contains(cut) == true && error?.message.contains("cannot take the picture") == true, "\(String(describing: error))")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).isEmpty)
    }

    @Test func countZeroIsRefusedByTheLoader() throws {
        let error = #expect(throws: GraphError.self) {
            try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "thumbs": { "type": "analysis.thumbnails", "params": { "path": "a.mp4", "count": 0, "sprite": "s.jpg" } } }, "edges": [] }"#)
        }
        #expect(error?.code == .invalidGraph)
        #expect(error?.description.contains("nodes.thumbs.params.count") == true, "\(String(describing: error))")
    }

    /// A sound file and a text file are not videos: refused (66) naming the file, nothing written.
    @Test func notAVideoIsRefusedNamingTheFile() throws {
        let wav = path("tone.wav")
        try TestMedia.writeWAV(wav, seconds: 1)
        let text = path("notes.txt")
        try "not a video\n".write(toFile: text, atomically: true, encoding: .utf8)
        for (file, words) in [(wav, "no video track"), (text, "cannot read")] {
            let error = #expect(throws: GraphError.self) { try run(#""path": "\#(file)", "sprite": "\#(path("s.jpg"))""#) }
            #expect(error?.code == .inputUnreadable)
            #expect(error?.message.contains(file) == true && error?.message.contains(words) == true, "\(String(describing: error?.message))")
            #expect(error?.node == "thumbs")
        }
        #expect(!FileManager.default.fileExists(atPath: path("s.jpg")))
    }

    /// A link or a pipe at an output's name is refused (73) as every sink refuses it, and what the
    /// node had to write besides is not left behind, under its name or a temporary one.
    @Test(arguments: ["link", "fifo"])
    func aHostileOutputIsRefused(_ kind: String) throws {
        let file = try video()
        let out = path("hostile-\(kind)")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let vtt = "\(out)/sprite.vtt"
        if kind == "link" {
            try "precious\n".write(toFile: path("precious.txt"), atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: vtt, withDestinationPath: path("precious.txt"))
        } else {
            #expect(mkfifo(vtt, 0o600) == 0)
        }
        let error = #expect(throws: GraphError.self) {
            try run(#""path": "\#(file)", "count": 3, "folder": "\#(out)", "sprite": "\#(out)/sprite.jpg", "vtt": "\#(vtt)""#)
        }
        #expect(error?.code == .outputUnwritable)
        #expect(error?.message.contains(vtt) == true, "\(String(describing: error?.message))")
        let left = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(left == ["sprite.vtt"], "left behind: \(left)")
        if kind == "link" { #expect(try String(contentsOfFile: path("precious.txt"), encoding: .utf8) == "precious\n") }
    }

    @Test func timesAreEvenlySpacedOrEveryInterval() {
        let ten = MediaTime(seconds: 10)
        #expect(ThumbnailsNode.times(duration: ten, count: 4, interval: nil).map(\.seconds) == [0, 2.5, 5, 7.5])
        #expect(ThumbnailsNode.times(duration: ten, count: nil, interval: 3).map(\.seconds) == [0, 3, 6, 9])
        #expect(ThumbnailsNode.times(duration: ten, count: nil, interval: 20).map(\.seconds) == [0])
        #expect(ThumbnailsNode.times(duration: ten, count: nil, interval: nil).count == 10)
    }

    /// Pictures of an HLG or a PQ file are SDR (tone-mapped by effect.toneMap, issue 49), as close
    /// to the chart the HDR file was made from as that chart's own picture is: the measures and
    /// floors of ToneMapNodeTests (decode's 8-bit frames hold both under 35 dB, it says); so is
    /// their sprite sheet, and Dolby Vision 8.4's pictures, by its HLG base.
    @Test(arguments: ["hlg", "pq", "dv"]) func picturesOfHDRAreSDR(_ transfer: String) throws {
        let sdr = try HDRTestMedia.makeChart(in: folder)
        let hdr = switch transfer {
        case "hlg": try HDRTestMedia.makeHLG(from: sdr, in: folder)
        case "dv": try HDRTestMedia.makeDolbyVision84(fromHLG: try HDRTestMedia.makeHLG(from: sdr, in: folder), in: folder)
        default: try HDRTestMedia.makePQ(from: sdr, in: folder)
        }
        let reference = try run(#""path": "\#(sdr)", "count": 1, "width": 320, "format": "png", "folder": "\#(path("sdr"))""#).pictures
        let sprite = path("\(transfer)-sprite.png")
        let pictures = try run(#""path": "\#(hdr)", "count": 1, "width": 320, "format": "png", "folder": "\#(path(transfer))", "sprite": "\#(sprite)""#).pictures
        let (ref, got) = (try #require(reference.first).image, try #require(pictures.first).image)
        #expect(got.byteCount == 320 * 240 * 4)
        let r = ref.withUnsafeBytes { Array($0) }
        for (what, image) in [("picture", got.withUnsafeBytes { Array($0) }), ("sprite", try raw(["-i", sprite], "bgra"))] {
            let c = HDRTestMedia.compareBGRA(image, with: r, width: 320, height: 240)
            print("analysis.thumbnails \(transfer) \(what): luma PSNR \(c.psnr) dB, ΔE00 mean \(c.meanDeltaE) over \(c.patches) patches")
            #expect(c.patches >= 100)
            #expect(c.meanDeltaE <= 3, "\(transfer) \(what): mean ΔE00 \(c.meanDeltaE)")
            #expect(c.psnr >= (transfer == "pq" ? 32.5 : 33.5), "\(transfer) \(what): luma PSNR \(c.psnr) dB")
        }
    }
}
