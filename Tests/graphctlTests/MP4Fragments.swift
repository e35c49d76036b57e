import Foundation
import GraphKit

/// What a fragmented MP4 being written holds so far, read with GraphKit's box reader
/// (MediaContainers): how many video samples are in fragments that are complete on disk (a
/// `moof` and the `mdat` after it, both whole). A test waits on this instead of on the clock.
struct MP4Fragments {
    /// Complete fragments (moof + mdat).
    var fragments = 0
    /// Video samples in those fragments, from their `trun` boxes.
    var videoSamples = 0

    init(path: String) {
        // The file as it is now: its size when opened bounds every read, so a muxer writing on
        // is not read half-way through a box. A file not there yet holds nothing.
        guard let source = FileBytes(path: path), let file = try? MP4File(source) else { return }
        /// Whole, with a known size: a box whose size is "to the end of the file" is still
        /// being written.
        func complete(_ box: BoxExtent) -> Bool { file.isWhole(box) && box.header.sizeField != .toEnd }
        let videoTrack = file.first("moov").flatMap { complete($0) ? try? file.read($0) : nil }
            .flatMap { MP4Movie(moov: $0).tracks(handler: "vide").first?.track.trackID }
        for (i, box) in file.boxes.enumerated() where box.type == "moof" {
            guard complete(box), i + 1 < file.boxes.count, file.boxes[i + 1].type == "mdat", complete(file.boxes[i + 1]),
                  let moof = try? file.read(box) else { continue }
            fragments += 1
            for traf in moof.all("traf") where traf.first("tfhd")?.read(TrackFragmentHeader.self)?.trackID == videoTrack {
                videoSamples += traf.all("trun").compactMap { $0.read(TrackRun.self) }.reduce(0) { $0 + Int($1.sampleCount) }
            }
        }
    }
}
