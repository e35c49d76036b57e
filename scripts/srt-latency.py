#!/usr/bin/env python3
"""Reads capture.video's clock stamp from raw 8-bit grey frames on stdin (ffmpeg's
`-f rawvideo -pix_fmt gray -`) and prints glass-to-glass latency: for each frame, the wall
clock (CLOCK_REALTIME) when its last byte arrived less the milliseconds stamped into it when it
left the source. Used by scripts/srt-latency.sh.

The stamp (Sources/Nodes/Sources/ClockStamp.swift, the same rule): 52 square cells of `side`
pixels, from one cell in from the top-left corner: the marker 1011, the low 40 bits of the
milliseconds (most significant first), a CRC-8 of them as 5 bytes (polynomial 0x07, initial 0);
side = min(16, width // 54, height // 3) rounded down to even; a cell is 1 when its centre is
brighter than mid-grey.

    srt-latency.py WIDTH HEIGHT [--fps N] [--warmup S] [--seconds S] [--csv FILE]

Frames in the first `warmup` seconds (from the first frame) are read but not counted; it stops
after `seconds` more and prints median, p95 and max. A frame with the same stamp as the one
before (a receiver repeating a frame) counts once, at its first arrival; stamps more than 1.5
frame intervals apart are counted as gaps (frames lost on the way).
"""
import argparse
import sys
import time

MARKER = [1, 0, 1, 1]
VALUE_BITS = 40
CELLS = len(MARKER) + VALUE_BITS + 8
MASK = (1 << VALUE_BITS) - 1


def crc8(value):
    crc = 0
    for shift in range(VALUE_BITS - 8, -1, -8):
        crc ^= (value >> shift) & 0xFF
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def centres(width, height):
    side = min(16, width // (CELLS + 2), height // 3) & ~1
    if side < 2:
        sys.exit(f"{width}x{height} is too small for the clock stamp")
    y = side + side // 2
    return [y * width + side * (1 + i) + side // 2 for i in range(CELLS)]


def read_stamp(frame, offsets):
    bits = [1 if frame[o] >= 128 else 0 for o in offsets]
    if bits[:4] != MARKER:
        return None
    value = 0
    for b in bits[4:4 + VALUE_BITS]:
        value = value << 1 | b
    check = 0
    for b in bits[4 + VALUE_BITS:]:
        check = check << 1 | b
    return value if check == crc8(value) else None


def resolve(stamp, now):
    """The milliseconds nearest `now` whose low 40 bits are `stamp`."""
    behind = (now - stamp) & MASK
    return now - behind if behind <= MASK // 2 else now + (MASK + 1 - behind)


def percentile(sorted_values, p):
    """Nearest-rank percentile."""
    k = max(0, min(len(sorted_values) - 1, -(-len(sorted_values) * p // 100) - 1))
    return sorted_values[k]


def main():
    a = argparse.ArgumentParser()
    a.add_argument("width", type=int)
    a.add_argument("height", type=int)
    a.add_argument("--fps", type=float, default=30)
    a.add_argument("--warmup", type=float, default=5)
    a.add_argument("--seconds", type=float, default=30)
    a.add_argument("--csv")
    args = a.parse_args()
    size = args.width * args.height
    offsets = centres(args.width, args.height)
    frame = bytearray(size)
    view = memoryview(frame)
    stdin = sys.stdin.buffer
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write("arrival_ms,stamp_ms,latency_ms,counted\n")
    first = None
    last_stamp = None
    latencies, unreadable, repeated, frames, gaps = [], 0, 0, 0, 0
    while True:
        got = 0
        while got < size:
            n = stdin.readinto(view[got:])
            if not n:
                break
            got += n
        if got < size:
            break
        arrival = time.clock_gettime_ns(time.CLOCK_REALTIME) / 1e6
        if first is None:
            first = arrival
        elapsed = (arrival - first) / 1000
        if elapsed >= args.warmup + args.seconds:
            break
        counted = elapsed >= args.warmup
        stamp = read_stamp(frame, offsets)
        if counted:
            frames += 1
        if stamp is None:
            unreadable += counted
            continue
        ms = resolve(stamp, int(arrival))
        if ms == last_stamp:
            repeated += counted
            continue
        if counted and last_stamp is not None and ms - last_stamp > 1500 / args.fps:
            gaps += 1
        last_stamp = ms
        if csv:
            csv.write(f"{arrival:.3f},{ms},{arrival - ms:.3f},{int(counted)}\n")
        if counted:
            latencies.append(arrival - ms)
    if not latencies:
        sys.exit(f"no stamped frame read after the warm-up (frames {frames}, unreadable {unreadable})")
    s = sorted(latencies)
    print(f"frames {frames} in {args.seconds:g} s after {args.warmup:g} s warm-up: {len(s)} stamped, "
          f"{repeated} repeated, {unreadable} unreadable, {gaps} gaps between stamps")
    print(f"latency ms: median {percentile(s, 50):.1f}  p95 {percentile(s, 95):.1f}  max {s[-1]:.1f}  min {s[0]:.1f}")


if __name__ == "__main__":
    main()
