import Foundation
import Glibc
import Testing
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// GraphKit's one MP4 writer: samples written as they come, the index built once at the end
/// (or fragments as they go), read back by this library's reader and by ffprobe.
@Suite struct MP4WriterTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static let avcC: [UInt8] = [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0]
    static let video = MP4TrackFormat(trackID: 1, codec: .h264(avcC: avcC, width: 320, height: 240))
    static let audio = MP4TrackFormat(trackID: 2, codec: .aac(audioSpecificConfig: [0x11, 0x90], sampleRate: 48000, channels: 2))

    /// A file `layout` writes of `frames` video samples (3 ticks of 90 kHz apart... 3600: 25 fps,
    /// with B-frame-like presentation offsets) and audio (1024 ticks a sample, from 0.2 s).
    func write(_ layout: MP4Writer.Layout, name: String, in folder: URL? = nil, frames: Int = 50, ending: MP4Writer.Ending = .init(),
               video: MP4TrackFormat = Self.video) throws -> (path: String, data: [[UInt8]]) {
        let path = (folder ?? self.folder).appendingPathComponent(name).path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: layout, trackNames: ["video", "audio"])
        try writer.setFormat(video, track: 0)
        try writer.setFormat(Self.audio, track: 1)
        var data: [[UInt8]] = [[], []]
        var audioTime: Int64 = 9600
        for i in 0..<frames {
            // Decode order I P B B …: presentation 1 frame after decode for all but the B pairs' order.
            let bytes = (0..<(100 + i * 7)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
            let dts = Int64(i) * 3600, pts = dts + 7200
            try bytes.withUnsafeBytes {
                try writer.append(track: 0, bytes: $0, decodeTime: dts, presentationTime: pts, duration: 3600, isSync: i % 10 == 0)
            }
            data[0].append(contentsOf: bytes)
            while Double(audioTime) / 48000 < Double(dts) / 90000 + 0.04 {
                let a = (0..<(200 + Int(audioTime / 1024) % 50)).map { UInt8(truncatingIfNeeded: $0 ^ Int(audioTime)) }
                try a.withUnsafeBytes { try writer.append(track: 1, bytes: $0, decodeTime: audioTime, presentationTime: audioTime, duration: 1024, isSync: true) }
                data[1].append(contentsOf: a)
                audioTime += 1024
            }
        }
        try writer.finish(ending)
        return (path, data)
    }

    /// Every track's samples, read back by this library: their bytes one after another, the
    /// durations and composition offsets.
    func readBack(_ path: String) throws -> (movie: MP4Movie, data: [[UInt8]], samples: [[MP4Sample]]) {
        let bytes = try #require(FileBytes(path: path))
        let movie = try #require(try MP4File(bytes).movie())
        var data: [[UInt8]] = [], samples: [[MP4Sample]] = []
        for i in movie.trackIndices {
            let s = try movie.track(i).samples(fileSize: bytes.count)
            samples.append(s)
            data.append(try s.flatMap { try bytes.read(at: $0.offset, count: Int($0.size)) })
        }
        return (movie, data, samples)
    }

    /// Index last, and index first (the media moved up in place after the index), on this disk
    /// and in memory (tmpfs, when there is one).
    @Test func aWholeFileHoldsEverySampleWhereItsIndexSays() throws {
        var memory: URL?
        if FileManager.default.fileExists(atPath: "/dev/shm") {
            memory = URL(fileURLWithPath: "/dev/shm").appendingPathComponent("graphkit-writer-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: memory!, withIntermediateDirectories: false)
        }
        defer { memory.map { try? FileManager.default.removeItem(at: $0) } }
        for (layout, name, place) in [(MP4Writer.Layout.indexLast, "last.mp4", folder), (.indexFirst, "first.mp4", folder), (.indexFirst, "moved.mp4", memory)] {
            guard let place else { continue }
            let (path, written) = try write(layout, name: name, in: place)
            let (movie, data, samples) = try readBack(path)
            #expect(data == written, "\(name)")
            #expect(samples[0].count == 50)
            // Durations from the decode times; the last one its own.
            #expect(samples[0].allSatisfy { $0.duration == 3600 })
            #expect(samples[1].allSatisfy { $0.duration == 1024 })
            #expect(samples[0].allSatisfy { $0.compositionOffset == 7200 })
            #expect(samples[0].filter(\.isSync).count == 5)
            // The video starts 0.2 s before the audio: the sound has an empty edit, the video an
            // edit from its first presentation.
            let videoEdits = try #require(movie.track(movie.trackIndices[0]).edits)
            #expect(videoEdits.count == 1 && videoEdits[0].mediaTime == 7200)
            let audioEdits = try #require(movie.track(movie.trackIndices[1]).edits)
            #expect(audioEdits.count == 2 && audioEdits[0].mediaTime == -1)
            #expect(audioEdits[0].duration == 120, "0.2 s less the video's 0.08 s start, in ms: \(audioEdits)")
            let types = try MP4File(try #require(FileBytes(path: path))).boxes.map(\.type)
            #expect(types == (name == "last.mp4" ? ["ftyp", "free", "mdat", "moov"] : ["ftyp", "moov", "mdat"]), "\(types)")
        }
    }

    /// Past 4 GiB of media (a hole of 4.4 GB in the middle, after the first half's samples):
    /// the media's header is 64 bits wide, the chunk offsets are `co64`, and every sample is read
    /// back where the index says, on both sides of the hole.
    @Test func pastFourGiBTheSizesAndOffsetsAre64Bits() throws {
        let path = folder.appendingPathComponent("large.mp4").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video"])
        try writer.setFormat(Self.video, track: 0)
        var written: [UInt8] = []
        let hole: UInt64 = 4_400_000_000
        for i in 0..<40 {
            if i == 20 { try writer.leaveUnwritten(hole) }
            let bytes = (0..<(500 + i)).map { UInt8(truncatingIfNeeded: $0 &+ i) }
            try bytes.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: Int64(i) * 3600, presentationTime: Int64(i) * 3600, duration: 3600, isSync: i % 10 == 0) }
            written += bytes
        }
        try writer.finish(.init())
        let (movie, data, samples) = try readBack(path)
        #expect(data == [written])
        #expect(samples[0].count == 40 && samples[0][20].offset > UInt64(UInt32.max), "\(samples[0][20])")
        let stbl = try #require(movie.moov.find(["trak", "mdia", "minf", "stbl"]))
        #expect(stbl.first("co64") != nil && stbl.first("stco") == nil)
        let file = try MP4File(try #require(FileBytes(path: path)))
        #expect(file.boxes.map(\.type) == ["ftyp", "mdat", "moov"], "the free box gives its 8 bytes to the 64-bit size")
        let mdat = try #require(file.boxes.first { $0.type == "mdat" })
        #expect(mdat.size > hole)
        // Nothing can make a hole in a file whose media goes elsewhere, or once it is finished.
        #expect(throws: ContainerError.self) { try writer.leaveUnwritten(1) }
    }

    @Test func aFragmentedFileIsWholeAfterEachFragment() throws {
        let (path, _) = try write(.fragmented(seconds: 0.4), name: "frag.mp4", frames: 60)
        let file = try MP4File(try #require(FileBytes(path: path)))
        let types = file.boxes.map(\.type)
        #expect(types.prefix(2) == ["ftyp", "moov"])
        // A fragment starts at each key frame 0.4 s or more after the one before: every 10th frame.
        #expect(types.filter { $0 == "moof" }.count == 6, "\(types)")
        #expect(types.filter { $0 == "mdat" }.count == 6)
    }

    /// A video track given the media it shows (a copy of a file cut between key frames) gets
    /// that edit, whole or fragmented, and the file starts where the first track shows: the
    /// pictures before the edit are in the media, not shown. Cut short (a copy stopped), the edit
    /// ends with the samples written.
    @Test func aTrackGivenTheMediaItShowsHasThatEdit() throws {
        var video = Self.video
        // From the 5th picture shown (decode 0 … presentation 7200 + 5 × 3600), for 20 pictures.
        video.shownMedia = .init(start: 7200 + 5 * 3600, duration: 20 * 3600)
        let (path, _) = try write(.indexLast, name: "shown.mp4", frames: 40, video: video)
        let (movie, _, samples) = try readBack(path)
        #expect(samples[0].count == 40)
        let picture = try #require(movie.tracks(handler: "vide").first).track
        let sound = try #require(movie.tracks(handler: "soun").first).track
        // The sound starts at 0.2 s, the pictures shown at 0.28 s: they wait 80 ms.
        #expect(picture.edits == [.init(duration: 80, mediaTime: -1), .init(duration: 800, mediaTime: 25200)], "\(String(describing: picture.edits))")
        #expect(sound.edits == nil || sound.edits?.first?.mediaTime == 0, "\(String(describing: sound.edits))")
        let (short, _) = try write(.indexLast, name: "shown-short.mp4", frames: 15, video: video)
        let cut = try #require(try readBack(short).movie.tracks(handler: "vide").first).track
        // 15 pictures (7200 after the last decode), from the 5th shown: 10 × 3600 ticks, 400 ms.
        #expect(cut.edits?.last == .init(duration: 400, mediaTime: 25200), "\(String(describing: cut.edits))")
        let (fragmented, _) = try write(.fragmented(seconds: 0.4), name: "shown-frag.mp4", frames: 40, video: video)
        let fragmentedBytes = try #require(FileBytes(path: fragmented))
        let initial = try #require(try MP4File(fragmentedBytes).movie())
        // Written before the samples: to the media's end.
        #expect(try #require(initial.tracks(handler: "vide").first).track.edits == [.init(duration: 0, mediaTime: 25200)])
    }

    /// The media moved up in place (where no block can be inserted): every byte where it was
    /// plus the shift, across the 4 MiB steps and a last one that is not whole.
    @Test func mediaMovedUpInPlaceIsWhole() throws {
        let path = folder.appendingPathComponent("moved").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let media = (0..<(9 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        try MP4Writer.pwriteAll(fd, media, at: 0)
        try MP4Writer.moveUp(fd, count: UInt64(media.count), by: 4_096 + 77)
        let bytes = try #require(FileBytes(path: path))
        #expect(bytes.count == UInt64(media.count + 4_096 + 77))
        #expect(try bytes.read(at: 4_096 + 77, count: media.count) == media)
    }

    @Test func decodeTimesThatGoBackAreRefused() throws {
        let path = folder.appendingPathComponent("back.mp4").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video"])
        try writer.setFormat(Self.video, track: 0)
        let one: [UInt8] = [1, 2, 3]
        try one.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: 3600, presentationTime: 3600, duration: nil, isSync: true) }
        let error = #expect(throws: ContainerError.self) {
            try one.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: 0, presentationTime: 0, duration: nil, isSync: false) }
        }
        #expect(error?.reason.contains("the video input's time stamps go back at 0 s (after 0.04 s)") == true, "\(String(describing: error))")
        // A sample before its track's format, and a format that changes.
        var other = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["audio", "video"])
        #expect(throws: ContainerError.self) {
            try one.withUnsafeBytes { try other.append(track: 1, bytes: $0, decodeTime: 0, presentationTime: 0, duration: nil, isSync: true) }
        }
        try other.setFormat(Self.audio, track: 0)
        try one.withUnsafeBytes { try other.append(track: 0, bytes: $0, decodeTime: 0, presentationTime: 0, duration: nil, isSync: true) }
        #expect(throws: ContainerError.self) { try other.setFormat(Self.video, track: 0) }
    }

    @Test func theEndingWritesTagsDelayAndMatrix() throws {
        var ending = MP4Writer.Ending()
        ending.tags = [(FourCC(0xA96E_616D /* ©nam */), "A title")]
        ending.edits.audioDelay = EncoderDelay(priming: 1024, samples: 48000, sampleRate: 48000)
        ending.edits.videoMatrix = DisplayMatrix(text: "0 1 -1 0 0 0")
        ending.extraTags.location = "+48.8583+002.2945/"
        let (path, _) = try write(.indexLast, name: "tags.mp4", frames: 30, ending: ending)
        let (movie, _, _) = try readBack(path)
        #expect(movie.metadataItems.contains { $0.key == FourCC(0xA96E_616D) })
        let sound = try #require(movie.tracks(handler: "soun").first).track
        #expect(sound.edits?.last?.mediaTime == 1024)
        #expect(movie.timescale == 48000)
        #expect(try #require(movie.tracks(handler: "vide").first).track.displayMatrix == DisplayMatrix(text: "0 1 -1 0 0 0"))
    }

    /// A length limit stops every input where it is, and the sound can be seconds ahead of the
    /// pictures (it encodes faster): the presentation ends where the shortest track does.
    @Test func aFileCutShortEndsWithItsShortestTrack() throws {
        for cut in [false, true] {
            let path = folder.appendingPathComponent("cut-\(cut).mp4").path
            let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            try #require(fd >= 0)
            var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video", "audio"])
            try writer.setFormat(Self.video, track: 0)
            try writer.setFormat(Self.audio, track: 1)
            let bytes = [UInt8](repeating: 7, count: 100)
            try bytes.withUnsafeBytes { raw in
                // One second of pictures, three of sound.
                for i in 0..<25 { try writer.append(track: 0, bytes: raw, decodeTime: Int64(i) * 3600, presentationTime: Int64(i) * 3600, duration: 3600, isSync: i == 0) }
                for i in 0..<141 { try writer.append(track: 1, bytes: raw, decodeTime: Int64(i) * 1024, presentationTime: Int64(i) * 1024, duration: 1024, isSync: true) }
            }
            var ending = MP4Writer.Ending()
            ending.endWithShortestTrack = cut
            try writer.finish(ending)
            close(fd)
            let (movie, _, _) = try readBack(path)
            let seconds = Double(try #require(movie.header).duration) / Double(movie.timescale)
            #expect(abs(seconds - (cut ? 1 : 3.008)) < 0.002, "cut \(cut): \(seconds) s")
            let sound = try #require(movie.tracks(handler: "soun").first).track
            #expect(cut == (sound.edits?.last.map { abs(Double($0.duration) / Double(movie.timescale) - 1) < 0.002 } ?? false), "\(String(describing: sound.edits))")
        }
    }

    /// A presentation that starts at 0.72 s on both tracks' clocks (a passthrough writer's
    /// session): every sample stays in the file, and each track's edit starts at 0.72 s in its
    /// media: the video's at the picture shown then (its media starts at its first decode, 0),
    /// the sound's 0.52 s into its media (which starts at 0.2 s). The movie lasts from 0.72 s to
    /// the last picture's end, 2.08 s.
    @Test func aStatedStartEditsOutWhatComesBefore() throws {
        var ending = MP4Writer.Ending()
        ending.presentationStarts = ["video": (72, 100), "audio": (72, 100)]
        let (path, data) = try write(.indexLast, name: "started.mp4", ending: ending)
        let (movie, read, _) = try readBack(path)
        #expect(read == data)
        let video = try #require(movie.tracks(handler: "vide").first).track, sound = try #require(movie.tracks(handler: "soun").first).track
        #expect(video.edits?.map(\.mediaTime) == [64_800], "\(String(describing: video.edits))")  // 0.72 s of 90 kHz
        #expect(sound.edits?.map(\.mediaTime) == [24_960], "\(String(describing: sound.edits))")  // 0.52 s of 48 kHz
        let seconds = Double(try #require(movie.header).duration) / Double(movie.timescale)
        #expect(abs(seconds - 1.36) < 0.002, "\(seconds) s")
        #expect(video.edits.map { abs(Double($0[0].duration) / Double(movie.timescale) - 1.36) < 0.002 } == true)
    }

    /// A stated start before every track's first sample (the video shows from 0.08 s, the sound
    /// from 0.2 s) keeps the lead: each track begins with an empty edit to its first sample, as
    /// AVFoundation's session does, where the file would otherwise start at the earliest one.
    @Test func aStatedStartBeforeEveryTrackKeepsTheLead() throws {
        var ending = MP4Writer.Ending()
        ending.presentationStarts = ["video": (0, 1), "audio": (0, 1)]
        let (path, data) = try write(.indexLast, name: "lead.mp4", ending: ending)
        let (movie, read, _) = try readBack(path)
        #expect(read == data)
        let video = try #require(movie.tracks(handler: "vide").first).track, sound = try #require(movie.tracks(handler: "soun").first).track
        #expect(video.edits?.first?.mediaTime == -1 && video.edits?.first?.duration == 80, "\(String(describing: video.edits))")
        #expect(sound.edits?.first?.mediaTime == -1 && sound.edits?.first?.duration == 200, "\(String(describing: sound.edits))")
        let (unstated, _) = try write(.indexLast, name: "unstated.mp4")
        let earliest = try #require(try readBack(unstated).0.tracks(handler: "vide").first).track
        #expect(earliest.edits?.contains { $0.mediaTime == -1 } != true, "without it the file starts at the earliest sample")
    }

    /// A flush on one input (a seek after a preroll) drops what that input gave before it, and
    /// only that: the other input's samples after its own flush stay.
    @Test func aFlushedTrackStartsAgainAlone() throws {
        let path = folder.appendingPathComponent("flush.mp4").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video", "audio"])
        try writer.setFormat(Self.video, track: 0)
        try writer.setFormat(Self.audio, track: 1)
        let stale: [UInt8] = [9, 9, 9], fresh: [UInt8] = [1, 2, 3, 4]
        try stale.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: 0, presentationTime: 0, duration: 3600, isSync: true) }
        try stale.withUnsafeBytes { try writer.append(track: 1, bytes: $0, decodeTime: 0, presentationTime: 0, duration: 1024, isSync: true) }
        writer.restart(track: 0)
        for i in 0..<3 {
            try fresh.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: Int64(i) * 3600, presentationTime: Int64(i) * 3600, duration: 3600, isSync: i == 0) }
        }
        writer.restart(track: 1)
        try fresh.withUnsafeBytes { try writer.append(track: 1, bytes: $0, decodeTime: 0, presentationTime: 0, duration: 1024, isSync: true) }
        try writer.finish()
        let (_, data, samples) = try readBack(path)
        #expect(samples.map(\.count) == [3, 1])
        #expect(data == [fresh + fresh + fresh, fresh])
    }

    @Test func dOpsIsTheOpusHeadBigEndian() throws {
        // OpusHead: version 1, 2 channels, pre-skip 312, 48000 Hz, gain 0, family 0.
        let head: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0]
        #expect(MP4TrackFormat.dOps(opusHead: head) == [0, 2, 0x01, 0x38, 0, 0, 0xBB, 0x80, 0, 0, 0])
        #expect(MP4TrackFormat.dOps(opusHead: Array(head.prefix(12))) == nil)
    }

    /// An encoder that changes its configuration in the stream (a new size, new parameter
    /// sets): the track takes a second sample description from the change on, the chunks after
    /// it name it, and ffmpeg and GStreamer decode every picture at its own size. A change of
    /// codec or of an audio rate, or any change in a fragmented file, is refused naming it.
    @Test(.media) func aChangedConfigurationIsASecondSampleDescription() throws {
        var parts: [(format: MP4TrackFormat, bytes: FileBytes, samples: [MP4Sample])] = []
        for (k, size) in ["160x120", "176x144"].enumerated() {
            let path = folder.appendingPathComponent("part\(k).mp4").path
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size):r=25:d=1", "-c:v", "libx264",
                                             "-g", "10", "-bf", "0", "-x264-params", "sliced-threads=0", path])
            let bytes = try #require(FileBytes(path: path))
            let movie = try #require(try MP4File(bytes).movie())
            let track = movie.track(movie.trackIndices[0])
            let d = try #require(SampleDescription(track))
            let format = MP4TrackFormat(trackID: 1, codec: .h264(avcC: try #require(d.configuration).body, width: d.size!.width, height: d.size!.height))
            parts.append((format, bytes, try track.samples(fileSize: bytes.count)))
        }
        let path = folder.appendingPathComponent("changed.mp4").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video"])
        var time: Int64 = 0
        for part in parts {
            try writer.setFormat(part.format, track: 0)
            for s in part.samples {
                let data = try part.bytes.read(at: s.offset, count: Int(s.size))
                try data.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: time, presentationTime: time, duration: 3600, isSync: s.isSync) }
                time += 3600
            }
        }
        // Back to the first configuration: its description again, not a third.
        try writer.setFormat(parts[0].format, track: 0)
        let again = try parts[0].bytes.read(at: parts[0].samples[0].offset, count: Int(parts[0].samples[0].size))
        try again.withUnsafeBytes { try writer.append(track: 0, bytes: $0, decodeTime: time, presentationTime: time, duration: 3600, isSync: true) }
        try writer.finish(.init())
        close(fd)
        let written = try #require(FileBytes(path: path))
        let movie = try #require(try MP4File(written).movie())
        let stbl = try #require(movie.moov.find(["trak", "mdia", "minf", "stbl"]))
        let stsd = try #require(stbl.first("stsd"))
        #expect(stsd.body.count > 8 && Array(stsd.body[4..<8]) == [0, 0, 0, 2], "two descriptions")
        let stsc = try #require(stbl.first("stsc")?.read(SampleToChunk.self))
        let indices = stsc.entries.map(\.sampleDescriptionIndex)
        #expect(indices.first == 1 && indices.contains(2) && indices.last == 1, "\(stsc.entries)")
        let sizes = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=width,height", "-of", "csv=p=0", path])
            .split(whereSeparator: \.isNewline).map { Self.trimmed(String($0)) }
        #expect(sizes == Array(repeating: "160,120", count: 25) + Array(repeating: "176,144", count: 25) + ["160,120"], "\(sizes)")
        // GStreamer's demuxer: every picture, each at its size (a caps change at each description).
        let raw = folder.appendingPathComponent("changed.yuv").path
        _ = try TestMedia.runTool("gst-launch-1.0", ["-q", "filesrc", "location=\(path)", "!", "qtdemux", "!", "h264parse", "!", "avdec_h264", "!",
                                                     "video/x-raw,format=I420", "!", "filesink", "location=\(raw)"])
        let decoded = try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int
        #expect(decoded == 26 * 160 * 120 * 3 / 2 + 25 * 176 * 144 * 3 / 2, "26 pictures of 160x120 and 25 of 176x144")
        // Refused: another codec, another audio rate, a change in a fragmented file.
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        var refusing = MP4Writer(descriptor: null, brand: .mp4, layout: .indexLast, trackNames: ["video", "audio"])
        try refusing.setFormat(parts[0].format, track: 0)
        try refusing.setFormat(Self.audio, track: 1)
        try again.withUnsafeBytes { try refusing.append(track: 0, bytes: $0, decodeTime: 0, presentationTime: 0, duration: 3600, isSync: true) }
        try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try refusing.append(track: 1, bytes: $0, decodeTime: 0, presentationTime: 0, duration: 1024, isSync: true) }
        let hevc = MP4TrackFormat(trackID: 1, codec: .hevc(hvcC: [1], width: 160, height: 120))
        #expect { try refusing.setFormat(hevc, track: 0) } throws: { "\($0)".contains("the video input's format changed in the stream (H.264 to HEVC)") }
        let slower = MP4TrackFormat(trackID: 2, codec: .aac(audioSpecificConfig: [0x12, 0x10], sampleRate: 44100, channels: 2))
        #expect { try refusing.setFormat(slower, track: 1) } throws: { "\($0)".contains("(AAC, 48000 Hz 2 ch to 44100 Hz 2 ch)") }
        var fragmented = MP4Writer(descriptor: null, brand: .mp4, layout: .fragmented(seconds: 1), trackNames: ["video"])
        try fragmented.setFormat(parts[0].format, track: 0)
        try again.withUnsafeBytes { try fragmented.append(track: 0, bytes: $0, decodeTime: 0, presentationTime: 0, duration: 3600, isSync: true) }
        #expect { try fragmented.setFormat(parts[1].format, track: 0) } throws: { "\($0)".contains("a fragmented file's track holds one") }
    }

    static func hash(_ line: String) -> String? { line.split(separator: ",").first { $0.hasPrefix("MD5:") }.map(String.init) }

    static func trimmed(_ line: String) -> String { String(line.reversed().drop { $0 == "," }.reversed()) }

    /// An ffmpeg file's packets (H.264 with B-frames, AAC) through the writer, in every layout:
    /// ffprobe finds the same packets, bytes and times.
    @Test(.media) func ffprobeReadsWhatTheWriterWrote() throws {
        let input = folder.appendingPathComponent("in.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=2", "-c:v", "libx264", "-g", "10", "-bf", "2", "-c:a", "aac", input])
        let bytes = try #require(FileBytes(path: input))
        let movie = try #require(try MP4File(bytes).movie())
        var formats: [MP4TrackFormat] = []
        var queue: [(track: Int, time: Double, sample: MP4Sample)] = []
        var scales: [Double] = []
        // The video as an encoder gives it (presentation from 0, decode before it), the sound
        // from 0 with its priming, which the ending's encoder delay says (as sink.mp4 learns it).
        var shifts: [Int64] = []
        var ending = MP4Writer.Ending()
        for (k, i) in movie.trackIndices.enumerated() {
            let track = movie.track(i)
            let d = try #require(SampleDescription(track))
            let config = try #require(d.configuration)
            formats.append(track.handler == "vide"
                ? MP4TrackFormat(trackID: 1, codec: .h264(avcC: config.body, width: d.size!.width, height: d.size!.height))
                : MP4TrackFormat(trackID: 1, codec: .aac(audioSpecificConfig: Array(config.body.dropFirst()), sampleRate: d.sound!.rate, channels: d.sound!.channels)))
            scales.append(Double(formats[k].timescale) / Double(track.mediaTimescale))
            let edit = try #require(track.edits?.first { $0.mediaTime >= 0 })
            if track.handler == "vide" {
                shifts.append(edit.mediaTime)
            } else {
                shifts.append(0)
                let samples = Int((Double(edit.duration) * Double(track.mediaTimescale) / Double(movie.timescale)).rounded())
                ending.edits.audioDelay = EncoderDelay(priming: Int(edit.mediaTime), samples: samples, sampleRate: track.mediaTimescale)
            }
            for s in try track.samples(fileSize: bytes.count) {
                queue.append((k, Double(s.decodeTime) / Double(track.mediaTimescale), s))
            }
        }
        queue.sort { ($0.time, $0.track) < ($1.time, $1.track) }
        for (name, layout) in [("last", MP4Writer.Layout.indexLast), ("first", .indexFirst), ("fragmented", .fragmented(seconds: 0.5))] {
            let path = folder.appendingPathComponent("\(name).mp4").path
            let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: layout, trackNames: ["video", "audio"])
            for (k, f) in formats.enumerated() { try writer.setFormat(f, track: k) }
            for (k, _, s) in queue {
                let data = try bytes.read(at: s.offset, count: Int(s.size))
                // The writer's clock (90 kHz for video) from the file's (12,800 Hz).
                func ticks(_ v: Int64) -> Int64 { Int64((Double(v - shifts[k]) * scales[k]).rounded()) }
                try data.withUnsafeBytes {
                    try writer.append(track: k, bytes: $0, decodeTime: ticks(Int64(s.decodeTime)), presentationTime: ticks(s.presentationTime),
                                      duration: Int64((Double(s.duration) * scales[k]).rounded()), isSync: s.isSync)
                }
            }
            try writer.finish(ending)
            close(fd)
            for stream in ["v:0", "a:0"] {
                func packets(_ p: String) throws -> [String] {
                    try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=size,duration_time,data_hash",
                                                      "-show_data_hash", "MD5", "-of", "csv=p=0", p]).split(whereSeparator: \.isNewline).map(String.init)
                }
                // Sizes, bytes and durations (the last packet's: its own), key frames by the
                // sync samples (the input's priming is marked to discard by its edit list).
                var (a, b) = (try packets(input), try packets(path))
                (a, b) = (a.map(Self.trimmed), b.map(Self.trimmed))
                // A fragment states no edit list: its packets' bytes, in order.
                if name == "fragmented" { (a, b) = (a.compactMap(Self.hash), b.compactMap(Self.hash)) }
                #expect(a.count == b.count && a == b, "\(name) \(stream): \(a.count) packets in, \(b.count) out; first difference \(zip(a, b).first { $0 != $1 }.map { "\($0)" } ?? "-")")
            }
            // Presentation times as ffmpeg's own file gives them (its edit list, ours).
            func pts(_ p: String) throws -> String {
                try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", p])
            }
            if name != "fragmented" { #expect(try pts(path) == pts(input), "\(name)") }
        }
    }
}
