// What a movie's sample tables claim, weighed against the bytes of the file before any list of
// samples is made (issue 47): a 20 MB MP4 whose `stsz` gives 20 million samples of one byte to
// each of several tracks once took 1.6–4.9 GB in `graphctl export`, `hls` and `concat`.

extension MP4Movie {
    /// The most samples GraphKit lists from one movie, its tracks together: 32 bytes each,
    /// 320 MB at most. A day of 60 fps video with 48 kHz AAC is 9.3 million; raw PCM stored a
    /// frame per sample (QuickTime's old way) passes it after about 35 minutes of stereo.
    package static let mostSamples = 10_000_000

    /// Refuses, naming the track and its `stsz` box, a movie whose tracks together claim more
    /// samples than ``mostSamples``, more samples than the file has bytes (every sample takes a
    /// byte of media or, listed with a size of 0, 4 bytes of table), or more bytes of samples
    /// of one size than the `fileSize` bytes of the file (two tracks' samples do not share
    /// bytes). Sizes listed one by one are checked against the file when the samples are
    /// listed (``MP4Track/samples(fileSize:)``), so a file cut short inside its media is still
    /// read up to its end. Reads three words of each `stsz`: its cost is nothing beside the
    /// index's.
    package func checkSampleClaims(fileSize: UInt64) throws(ContainerError) {
        var samples: UInt64 = 0, bytes: UInt64 = 0
        for i in trackIndices {
            let track = track(i)
            guard let stsz = track.box.find(["mdia", "minf", "stbl", "stsz"]) else { continue }
            var r = ByteReader(stsz.body)
            guard (try? r.versionAndFlags()) != nil, let size = try? r.u32(), let count = try? r.u32() else { continue }
            let id = track.trackID
            samples += UInt64(count)
            guard samples <= UInt64(Self.mostSamples), samples <= fileSize else {
                throw ContainerError("its track \(id)'s stsz box claims \(count) samples, which with its other tracks' makes \(samples), more than "
                                     + (samples > fileSize ? "the file's \(fileSize) bytes can hold" : "the \(Self.mostSamples) GraphKit reads from one file")
                                     + ": its index is damaged")
            }
            guard size != 0 else { continue }
            bytes += UInt64(count) * UInt64(size)
            guard bytes <= fileSize else {
                throw ContainerError("its track \(id)'s stsz box claims \(count) samples of \(size) bytes, which with its other tracks' makes "
                                     + "\(bytes) bytes of samples, more than the file's \(fileSize): its index is damaged")
            }
        }
    }
}
