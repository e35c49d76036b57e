import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// Video compositions and audio mixes applied by an export session, as export code uses them
/// for crops, rotation fixes and fades; each output judged against ffmpeg doing the same to
/// the source (crop, transpose) or against the source's own levels.
@Suite(.media, .timeLimit(.minutes(10))) struct AVVideoCompositionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 2 s of 640x360 testsrc2 at 25 fps, and a 440 Hz sine at 48 kHz.
    func source() throws -> URL {
        let url = folder.appendingPathComponent("source.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=2",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-ac", "2",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "192k", url.path])
        return url
    }

    /// Frame `n` of `path`'s luma as stored (video range, 16 black), after ffmpeg's `filter`
    /// (none: as it is): the Y plane of its 4:2:0 frame.
    func luma(_ path: String, frame n: Int, filter: String? = nil) throws -> [UInt8] {
        let raw = folder.appendingPathComponent("frame-\(UUID().uuidString).yuv").path
        let chain = [filter, "select=eq(n\\,\(n))"].compactMap { $0 }.joined(separator: ",")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-vf", chain, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let frame = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        return Array(frame.prefix(frame.count * 2 / 3))
    }

    func meanAbsoluteDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, min(a.count, b.count)))
    }

    func mean(_ a: [UInt8]) -> Double { a.reduce(0.0) { $0 + Double($1) } / Double(max(1, a.count)) }

    func export(_ asset: AVAsset, preset: String = AVAssetExportPresetHighestQuality, name: String,
                configure: (AVAssetExportSession) -> Void) async throws -> (AVAssetExportSession, URL) {
        let session = try #require(AVAssetExportSession(asset: asset, presetName: preset))
        let out = folder.appendingPathComponent(name)
        session.outputURL = out
        session.outputFileType = .mp4
        configure(session)
        await session.export()
        return (session, out)
    }

    /// A crop (the render size, and the layer moved by minus the crop's corner) with a fade in
    /// over the first second: 320x180 frames, 50 of them; the first black; from 1 s on the
    /// source's middle (as ffmpeg's crop gives it); halfway through the fade, halfway between.
    /// `copy()` gives an immutable composition with the values it had; `mutableCopy()` a mutable one.
    @Test func copiesKeepTheirValues() throws {
        let original = AVMutableVideoComposition()
        original.renderSize = CGSize(width: 640, height: 360)
        original.frameDuration = CMTime(value: 1, timescale: 25)
        original.instructions = [AVMutableVideoCompositionInstruction()]
        let copy = try #require(original.copy() as? AVVideoComposition)
        #expect(!(copy is AVMutableVideoComposition))
        original.renderSize = CGSize(width: 2, height: 2)
        #expect(copy.renderSize == CGSize(width: 640, height: 360) && copy.frameDuration == CMTime(value: 1, timescale: 25) && copy.instructions.count == 1)
        let mutable = try #require(copy.mutableCopy() as? AVMutableVideoComposition)
        mutable.renderSize = CGSize(width: 320, height: 180)
        #expect(copy.renderSize == CGSize(width: 640, height: 360) && mutable.frameDuration == copy.frameDuration)
    }

    @Test func aCropWithAFadeIn() async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let composition = AVMutableVideoComposition()
        composition.renderSize = CGSize(width: 320, height: 180)
        composition.frameDuration = CMTime(value: 1, timescale: 25)
        let instruction = AVMutableVideoCompositionInstruction()
        instruction.timeRange = CMTimeRange(start: .zero, duration: try await asset.load(.duration))
        let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
        layer.setTransform(CGAffineTransform(translationX: -160, y: -90), at: .zero)
        layer.setOpacityRamp(fromStartOpacity: 0, toEndOpacity: 1, timeRange: CMTimeRange(start: .zero, duration: CMTime(value: 1, timescale: 1)))
        instruction.layerInstructions = [layer]
        composition.instructions = [instruction]
        var start: Float = -1, end: Float = -1
        var range = CMTimeRange.invalid
        #expect(layer.getOpacityRamp(for: CMTime(value: 1, timescale: 2), startOpacity: &start, endOpacity: &end, timeRange: &range))
        #expect(start == 0 && end == 1 && range.duration == CMTime(value: 1, timescale: 1))

        let (session, out) = try await export(asset, name: "cropped.mp4") { $0.videoComposition = composition }
        #expect(session.status == .completed, "\(String(describing: session.error))")
        let probe = try MediaProbe(out.path, countFrames: true)
        let video = try #require(probe.stream("video"))
        #expect(video.width == 320 && video.height == 180 && video.frameCount == 50, "\(video)")
        #expect(abs(probe.duration - 2) < 0.05)

        let crop = "crop=320:180:160:90"
        let first = try luma(out.path, frame: 0)
        #expect(first.count == 320 * 180 && first.allSatisfy { abs(Int($0) - 16) <= 3 }, "the first frame is black: mean \(mean(first))")
        let late = try luma(out.path, frame: 37), lateSource = try luma(src.path, frame: 37, filter: crop)
        #expect(meanAbsoluteDifference(late, lateSource) < 3, "from 1 s on, the source's middle: \(meanAbsoluteDifference(late, lateSource))")
        // Frame 12 (0.48 s): the picture at 0.48 of the way from black.
        let half = try luma(out.path, frame: 12), halfSource = try luma(src.path, frame: 12, filter: crop)
        let expected = halfSource.map { UInt8((16 + (Double($0) - 16) * 0.48).rounded()) }
        #expect(meanAbsoluteDifference(half, expected) < 3, "mid-fade: \(meanAbsoluteDifference(half, expected))")
    }

    /// A rotation fix: a quarter turn (x, y) → (360 − y, x) into a 360x640 render, as ffmpeg's
    /// `transpose=clock`; and the composition made from the asset's own properties shows it as
    /// it is (its size, its frame rate).
    @Test func aQuarterTurn() async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let composition = AVMutableVideoComposition(propertiesOf: asset)
        #expect(composition.renderSize == CGSize(width: 640, height: 360))
        #expect(composition.frameDuration == CMTime(value: 24, timescale: 600))
        composition.renderSize = CGSize(width: 360, height: 640)
        let instruction = try #require(composition.instructions.first as? AVMutableVideoCompositionInstruction)
        let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
        layer.setTransform(CGAffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 360, ty: 0), at: .zero)
        instruction.layerInstructions = [layer]

        let (session, out) = try await export(asset, name: "turned.mp4") { $0.videoComposition = composition }
        #expect(session.status == .completed, "\(String(describing: session.error))")
        let video = try #require(try MediaProbe(out.path).stream("video"))
        #expect(video.width == 360 && video.height == 640)
        let turned = try luma(out.path, frame: 10), reference = try luma(src.path, frame: 10, filter: "transpose=clock")
        #expect(turned.count == reference.count)
        #expect(meanAbsoluteDifference(turned, reference) < 3, "\(meanAbsoluteDifference(turned, reference))")
    }

    /// An audio mix's fade out over the second second: the first second as loud as the source,
    /// the middle of the fade about half as loud, its last tenth nearly silent.
    @Test func anAudioMixFadesOut() async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        let parameters = AVMutableAudioMixInputParameters(track: track)
        parameters.setVolumeRamp(fromStartVolume: 1, toEndVolume: 0,
                                 timeRange: CMTimeRange(start: CMTime(value: 1, timescale: 1), duration: CMTime(value: 1, timescale: 1)))
        let mix = AVMutableAudioMix()
        mix.inputParameters = [parameters]
        let (session, out) = try await export(asset, preset: AVAssetExportPresetAppleM4A, name: "faded.m4a") {
            $0.outputFileType = .m4a
            $0.audioMix = mix
        }
        #expect(session.status == .completed, "\(String(describing: session.error))")
        func rms(_ path: String, from start: Double, length: Double) throws -> Double {
            let raw = folder.appendingPathComponent("pcm-\(UUID().uuidString).raw").path
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-ss", String(start), "-t", String(length), "-i", path, "-f", "s16le", "-ac", "1", raw])
            let data = try Data(contentsOf: URL(fileURLWithPath: raw))
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
        }
        let loud = try rms(src.path, from: 0.3, length: 0.4)
        #expect(loud > 1000)
        #expect(abs(try rms(out.path, from: 0.3, length: 0.4) / loud - 1) < 0.05)
        #expect(abs(try rms(out.path, from: 1.45, length: 0.1) / loud - 0.5) < 0.08)
        #expect(try rms(out.path, from: 1.9, length: 0.08) / loud < 0.08)
    }

    /// A reader's video composition output: frames of the render size, at the composition's
    /// frame rate (10 a second from a 25 fps source: 20 frames, stamped k/10), BGRA as asked,
    /// each the source's middle as ffmpeg crops it (within the two conversions' rounding).
    @Test func aReaderDrawsTheComposition() async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let composition = AVMutableVideoComposition()
        composition.renderSize = CGSize(width: 320, height: 180)
        composition.frameDuration = CMTime(value: 1, timescale: 10)
        let instruction = AVMutableVideoCompositionInstruction()
        instruction.timeRange = CMTimeRange(start: .zero, duration: try await asset.load(.duration))
        let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
        layer.setTransform(CGAffineTransform(translationX: -160, y: -90), at: .zero)
        instruction.layerInstructions = [layer]
        composition.instructions = [instruction]

        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
        output.videoComposition = composition
        #expect(reader.canAdd(output))
        reader.add(output)
        #expect(reader.startReading())
        var stamps: [CMTime] = []
        var frame15: [UInt8] = []
        while let sample = output.copyNextSampleBuffer() {
            stamps.append(sample.presentationTimeStamp)
            let pixels = try #require(sample.imageBuffer)
            #expect(CVPixelBufferGetWidth(pixels) == 320 && CVPixelBufferGetHeight(pixels) == 180)
            #expect(CVPixelBufferGetPixelFormatType(pixels) == kCVPixelFormatType_32BGRA)
            if stamps.count == 16 {
                CVPixelBufferLockBaseAddress(pixels, .readOnly)
                let base = try #require(CVPixelBufferGetBaseAddress(pixels)), row = CVPixelBufferGetBytesPerRow(pixels)
                for y in 0..<180 { frame15 += UnsafeRawBufferPointer(start: base + y * row, count: 320 * 4) }
                CVPixelBufferUnlockBaseAddress(pixels, .readOnly)
            }
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        #expect(stamps.count == 20, "\(stamps.count) frames")
        #expect(stamps.enumerated().allSatisfy { CMTimeCompare($1, CMTime(value: Int64($0), timescale: 10)) == 0 }, "\(stamps.prefix(4))")
        // 1.5 s is the source's frame 37.
        let raw = folder.appendingPathComponent("crop37.bgra").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", src.path, "-vf", "crop=320:180:160:90,select=eq(n\\,37)", "-frames:v", "1",
                                         "-f", "rawvideo", "-pix_fmt", "bgra", raw])
        let reference = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(frame15.count == reference.count)
        #expect(meanAbsoluteDifference(frame15, reference) < 6, "\(meanAbsoluteDifference(frame15, reference))")

        let unset = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: nil)
        let second = try AVAssetReader(asset: asset)
        second.add(unset)
        #expect(second.startReading())
        #expect(unset.copyNextSampleBuffer() == nil)
        #expect(second.status == .failed)
        #expect((second.error as NSError?)?.localizedDescription.contains("videoComposition") == true, "\(String(describing: second.error))")
    }

    /// The background colour shows where the layer does not (here nowhere: opacity 0), in the
    /// colours a player shows: red, as ffmpeg decodes it by the file's own colour tags, at an SD
    /// render size (BT.601) and an HD one (BT.709).
    @Test(arguments: [(320, 180), (1280, 720)])
    func theBackgroundIsItsColour(_ width: Int, _ height: Int) async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let composition = AVMutableVideoComposition()
        composition.renderSize = CGSize(width: width, height: height)
        composition.frameDuration = CMTime(value: 1, timescale: 25)
        let instruction = AVMutableVideoCompositionInstruction()
        instruction.timeRange = CMTimeRange(start: .zero, duration: try await asset.load(.duration))
        instruction.backgroundColor = CGColor(red: 1, green: 0, blue: 0, alpha: 1)
        let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
        layer.setOpacity(0, at: .zero)
        instruction.layerInstructions = [layer]
        composition.instructions = [instruction]
        let (session, out) = try await export(asset, name: "red-\(height).mp4") { $0.videoComposition = composition }
        #expect(session.status == .completed, "\(String(describing: session.error))")
        let raw = folder.appendingPathComponent("red-\(height).rgb").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", out.path, "-vf", "select=eq(n\\,5)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        let rgb = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        let means = (0..<3).map { c in stride(from: c, to: rgb.count, by: 3).reduce(0.0) { $0 + Double(rgb[$1]) } / Double(rgb.count / 3) }
        #expect(means[0] > 245 && means[1] < 10 && means[2] < 10, "\(width)x\(height): mean RGB \(means)")
    }

    /// An audio mix output's `audioMix`: a track read at half volume is half as loud as read
    /// without one, in 16-bit and float; over two tracks (summed before they reach it) the first
    /// read fails the reader, naming it.
    @Test func anAudioMixOutputAppliesItsMix() async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        func rms(float: Bool, volume: Float?) throws -> Double {
            let reader = try AVAssetReader(asset: asset)
            let output = AVAssetReaderAudioMixOutput(audioTracks: [track], audioSettings: [
                AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMBitDepthKey: float ? 32 : 16, AVLinearPCMIsFloatKey: float,
                AVLinearPCMIsBigEndianKey: false, AVLinearPCMIsNonInterleaved: false])
            if let volume {
                let parameters = AVMutableAudioMixInputParameters(track: track)
                parameters.setVolume(volume, at: .zero)
                let mix = AVMutableAudioMix()
                mix.inputParameters = [parameters]
                output.audioMix = mix
            }
            reader.add(output)
            #expect(reader.startReading())
            var sum = 0.0, count = 0
            while let sample = output.copyNextSampleBuffer() {
                var length = 0
                var pointer: UnsafeMutablePointer<CChar>?
                guard let block = CMSampleBufferGetDataBuffer(sample),
                      CMBlockBufferGetDataPointer(block, atOffset: 0, lengthAtOffsetOut: nil, totalLengthOut: &length, dataPointerOut: &pointer) == kCMBlockBufferNoErr,
                      let pointer else { continue }
                let raw = UnsafeRawPointer(pointer)
                if float {
                    for i in 0..<(length / 4) { let v = Double(raw.load(fromByteOffset: i * 4, as: Float.self)); sum += v * v }
                    count += length / 4
                } else {
                    for i in 0..<(length / 2) { let v = Double(raw.load(fromByteOffset: i * 2, as: Int16.self)) / 32768; sum += v * v }
                    count += length / 2
                }
            }
            #expect(reader.status == .completed, "\(String(describing: reader.error))")
            return (sum / Double(max(1, count))).squareRoot()
        }
        for float in [false, true] {
            let plain = try rms(float: float, volume: nil), half = try rms(float: float, volume: 0.5)
            #expect(plain > 0.05 && abs(half / plain - 0.5) < 0.01, "float \(float): \(half) against \(plain)")
        }
        let reader = try AVAssetReader(asset: asset)
        let both = AVAssetReaderAudioMixOutput(audioTracks: [track, track], audioSettings: nil)
        let mix = AVMutableAudioMix()
        mix.inputParameters = [AVMutableAudioMixInputParameters(track: track)]
        (mix.inputParameters[0] as? AVMutableAudioMixInputParameters)?.setVolume(0.5, at: .zero)
        both.audioMix = mix
        reader.add(both)
        #expect(reader.startReading())
        #expect(both.copyNextSampleBuffer() == nil)
        #expect((reader.error as NSError?)?.localizedDescription.contains("one track") == true, "\(String(describing: reader.error))")
    }

    /// What cannot be drawn is refused by name, nothing is written: a passthrough given a video
    /// composition, instructions with a gap, a layer of a track the asset has not.
    @Test func refusals() async throws {
        let src = try source()
        let asset = AVURLAsset(url: src)
        let track = try #require(try await asset.loadTracks(withMediaType: .video).first)
        func composition(_ ranges: [(Double, Double)], trackID: CMPersistentTrackID? = nil) -> AVMutableVideoComposition {
            let c = AVMutableVideoComposition()
            c.renderSize = CGSize(width: 320, height: 180)
            c.frameDuration = CMTime(value: 1, timescale: 25)
            c.instructions = ranges.map { start, length in
                let i = AVMutableVideoCompositionInstruction()
                i.timeRange = CMTimeRange(start: CMTimeMakeWithSeconds(start, preferredTimescale: 600), duration: CMTimeMakeWithSeconds(length, preferredTimescale: 600))
                let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
                if let trackID { layer.trackID = trackID }
                i.layerInstructions = [layer]
                return i
            }
            return c
        }
        for (name, preset, drawing, says) in [
            ("passthrough.mp4", AVAssetExportPresetPassthrough, composition([(0, 2)]), "pick a preset that encodes"),
            ("gap.mp4", AVAssetExportPreset640x480, composition([(0, 1), (1.5, 0.5)]), "without one"),
            ("short.mp4", AVAssetExportPreset640x480, composition([(0, 1)]), "must cover all of it"),
            ("track.mp4", AVAssetExportPreset640x480, composition([(0, 2)], trackID: 99), "track 99 is not a video track"),
        ] {
            let (session, out) = try await export(asset, preset: preset, name: name) { $0.videoComposition = drawing }
            #expect(session.status == .failed, "\(name)")
            #expect((session.error as NSError?)?.localizedDescription.contains(says) == true, "\(name): \(String(describing: session.error))")
            #expect(!FileManager.default.fileExists(atPath: out.path), "\(name)")
        }
    }
}
