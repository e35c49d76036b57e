import GraphKitCore

/// The WebVTT file that tells a web video player which part of a sprite sheet previews which
/// time (the "thumbnails track" of video.js, JW Player, Plyr, Shaka): one cue a tile,
/// `00:00:00.000 --> 00:00:10.000` then `sprite.jpg#xywh=x,y,w,h` (a media fragment).
package enum WebVTTIndex {
    /// The file's text: cue `i` from `times[i]` to `times[i + 1]` (the last to `end`), showing
    /// tile `i` of `sheet`, which the player fetches as `spriteURL` (relative to the VTT's URL).
    package static func text(times: [MediaTime], end: MediaTime, sheet: SpriteSheet, spriteURL: String) -> String {
        var out = "WEBVTT\n"
        for (i, start) in times.enumerated() {
            let stop = i + 1 < times.count ? times[i + 1] : end
            let r = sheet.rect(i)
            out += "\n\(timestamp(start)) --> \(timestamp(stop))\n\(spriteURL)#xywh=\(r.x),\(r.y),\(r.width),\(r.height)\n"
        }
        return out
    }

    /// `hh:mm:ss.mmm`, as WebVTT writes a cue's time (hours always, for players that insist).
    package static func timestamp(_ t: MediaTime) -> String {
        let ms = max(0, Int((t.seconds * 1000).rounded()))
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = ms % 1000
        let m3 = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60)):\(two(ms / 1000 % 60)).\(m3)"
    }
}
