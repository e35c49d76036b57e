"""The photo jobs of scripts/bench.py (issue 72): an iPhone-shaped 12 MP HEIC (4032 × 3024 as a
grid of 8 × 6 HEVC tiles of 512 × 512, as a phone writes it), made once: the tiles coded by
heif-enc from ffmpeg's test pattern, put together here as a grid image (heif-enc writes none).
Then a 512-px thumbnail by ImageIO's names (graphkit-avf-bench thumbnail) against vipsthumbnail
and heif-thumbnailer, and a full decode to JPEG against heif-convert."""
import os
import struct
import subprocess


def boxes(data, start=0, end=None):
    """(type, body start, body end) of each box in data[start:end]."""
    end = len(data) if end is None else end
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[start + 8:start + 16])[0]
            header = 16
        elif size == 0:
            size = end - start
        yield kind.decode("latin-1"), start + header, start + size
        start += size


def coded_tile(path):
    """The primary item's hvcC box and coded bytes of a HEIC heif-enc wrote (one hvc1 image)."""
    data = open(path, "rb").read()
    meta = next((s, e) for k, s, e in boxes(data) if k == "meta")
    children = {k: (s, e) for k, s, e in boxes(data, meta[0] + 4, meta[1])}
    ipco = next((s, e) for k, s, e in boxes(data, *children["iprp"]) if k == "ipco")
    hvcc = next(data[s - 8:e] for k, s, e in boxes(data, *ipco) if k == "hvcC")
    s, _ = children["iloc"]
    version = data[s]
    sizes = struct.unpack(">H", data[s + 4:s + 6])[0]
    assert sizes >> 8 == 0x44 and (sizes >> 4) & 0xF in (0, 4), "heif-enc's iloc: 4-byte offsets and lengths, a base of 0 or 4"
    base_size = (sizes >> 4) & 0xF
    at = s + 8 + (2 if version >= 1 else 0) + 4  # count, first item's id, [method], data reference
    base = struct.unpack(">I", data[at:at + 4])[0] if base_size else 0
    at += base_size
    extents = struct.unpack(">H", data[at:at + 2])[0]
    assert extents == 1
    offset, length = struct.unpack(">II", data[at + 2:at + 10])
    return hvcc, data[base + offset:base + offset + length]


def box(kind, body):
    return struct.pack(">I4s", 8 + len(body), kind.encode()) + body


def full_box(kind, body, version=0, flags=0):
    return box(kind, struct.pack(">I", version << 24 | flags) + body)


def grid_heic(path, tiles, columns, rows, width, height):
    """A HEIC whose primary image is a grid of `tiles` (hvcC, bytes) making width × height."""
    count = len(tiles) + 1
    ispe = lambda w, h: full_box("ispe", struct.pack(">II", w, h))
    infe = full_box("infe", struct.pack(">HH", 1, 0) + b"grid\0", version=2)
    infe += b"".join(full_box("infe", struct.pack(">HH", 2 + n, 0) + b"hvc1\0", version=2, flags=1) for n in range(len(tiles)))
    properties = [ispe(width, height), ispe(512, 512)] + [t[0] for t in tiles]
    ipma = struct.pack(">I", count) + struct.pack(">HBB", 1, 1, 0x81)
    ipma += b"".join(struct.pack(">HBBB", 2 + n, 2, 0x82, 0x83 + n) for n in range(len(tiles)))
    iref = full_box("iref", box("dimg", struct.pack(">HH", 1, len(tiles)) + b"".join(struct.pack(">H", 2 + n) for n in range(len(tiles)))))
    grid = struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, width, height)
    payloads = [grid] + [t[1] for t in tiles]

    def meta(mdat):
        iloc = struct.pack(">BBH", 0x44, 0x00, count)
        at = mdat
        for n, p in enumerate(payloads):
            iloc += struct.pack(">HHHII", 1 + n, 0, 1, at, len(p))
            at += len(p)
        return full_box("meta", full_box("hdlr", b"\0" * 4 + b"pict" + b"\0" * 13) + full_box("pitm", struct.pack(">H", 1))
                        + full_box("iinf", struct.pack(">H", count) + infe) + full_box("iloc", iloc) + iref
                        + box("iprp", box("ipco", b"".join(properties)) + full_box("ipma", ipma)))

    ftyp = box("ftyp", b"heic" + b"\0" * 4 + b"mif1heic")
    start = len(ftyp) + len(meta(0)) + 8
    with open(path, "wb") as f:
        f.write(ftyp + meta(start) + box("mdat", b"".join(payloads)))


def phone_photo(bench):
    """out/bench/photo-12mp.heic: 4032 × 3024 from 8 × 6 tiles of 512 × 512 (made once)."""
    path = os.path.join(bench, "photo-12mp.heic")
    if os.path.exists(path):
        return path
    folder = os.path.join(bench, "photo-tiles")
    os.makedirs(folder, exist_ok=True)
    big = os.path.join(folder, "whole.png")
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=s=4096x3072", "-vf", "noise=alls=12:allf=t",
                    "-frames:v", "1", big], check=True)
    tiles = []
    for n in range(48):
        x, y = n % 8 * 512, n // 8 * 512
        png, heic = os.path.join(folder, f"{n}.png"), os.path.join(folder, f"{n}.heic")
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-i", big, "-vf", f"crop=512:512:{x}:{y}", png], check=True)
        subprocess.run(["heif-enc", "-q", "85", "-o", heic, png], check=True, stdout=subprocess.DEVNULL)
        tiles.append(coded_tile(heic))
    grid_heic(path, tiles, 8, 6, 4032, 3024)
    return path


def photo_job(runs, bench, root, compared):
    """The 512-px thumbnail and the full decode of a 12 MP grid HEIC (issue 72's figures)."""
    photo = phone_photo(bench)
    ours = os.path.join(root, ".build", "release", "graphkit-avf-bench")
    out = lambda name: os.path.join(bench, name)
    compared("512-px thumbnail of a 12 MP HEIC (4032 × 3024, 48 tiles of 512 × 512) → JPEG",
             [("graphkit-avf-bench thumbnail (ImageIO)", [ours, "thumbnail", photo, out("thumb-ours.jpg"), "512"]),
              ("vipsthumbnail", ["vipsthumbnail", photo, "-s", "512", "-o", out("thumb-vips.jpg")]),
              ("heif-thumbnailer", ["heif-thumbnailer", "-s", "512", photo, out("thumb-heif.jpg")])],
             runs, "vipsthumbnail", "goals: at most 1.0× vipsthumbnail and heif-thumbnailer; peak RSS at most 1.2× vipsthumbnail's")
    compared("Full decode of the same HEIC → JPEG",
             [("graphkit-avf-bench thumbnail 0 (ImageIO)", [ours, "thumbnail", photo, out("full-ours.jpg"), "0"]),
              ("heif-convert", ["heif-convert", photo, out("full-heif.jpg")]),
              ("graphkit-avf-bench decode (ImageIO, no JPEG)", [ours, "decode", photo])],
             runs, "heif-convert", "goal: at most 1.0× heif-convert")
