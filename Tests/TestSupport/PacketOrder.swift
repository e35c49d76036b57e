import Foundation

/// How a file's packets are laid out against time, as ffprobe reads them.
public enum PacketOrder {
    /// How far the file's order departs from time order: the most any packet's decode time is
    /// behind that of a packet stored before it, in seconds (0 for a file in time order). A muxer
    /// that interleaves by time keeps this to about its chunk length (mp4mux: 0.25 s).
    public static func worstLag(inFile path: String) throws -> Double {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("packets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let listing = folder.appendingPathComponent("packets.csv")
        FileManager.default.createFile(atPath: listing.path, contents: nil)
        let ffprobe = Process()
        ffprobe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffprobe.arguments = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,dts_time,pos", "-of", "csv=p=0", path]
        ffprobe.standardOutput = try FileHandle(forWritingTo: listing)
        try ffprobe.run()
        ffprobe.waitUntilExit()
        guard ffprobe.terminationStatus == 0 else { throw CPULoad.Failure(description: "ffprobe could not list the packets of \(path)") }
        // Each line: stream index, decode time, byte position.
        let packets = try String(contentsOf: listing, encoding: .utf8).split(separator: "\n").compactMap { line -> (pos: Int, dts: Double)? in
            let f = line.split(separator: ",")
            guard f.count >= 3, let dts = Double(f[1]), let pos = Int(f[2]) else { return nil }
            return (pos, dts)
        }.sorted { $0.pos < $1.pos }
        var latest = -Double.infinity, lag = 0.0
        for p in packets {
            lag = max(lag, latest - p.dts)
            latest = max(latest, p.dts)
        }
        return lag
    }
}
