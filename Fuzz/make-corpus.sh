#!/usr/bin/env bash
# Regenerates Fuzz/Corpus/media: the seed files of the decode fuzz target (fuzz-decode), each a
# few KB so that the fuzzer's mutations reach every part of them: WAV, MP3, FLAC, Ogg Vorbis,
# AAC in M4A, H.264 + AAC in MP4, and VP8 + Vorbis and H.264 + Opus in Matroska. Made with ffmpeg
# from its test sources, bit-exact and without metadata, so a rerun gives the same files on the
# same ffmpeg. Fuzz/Corpus/graph (graph documents) is written by hand; the fuzz-graph target also
# reads graphs/*.json.
set -euo pipefail
cd "$(dirname "$0")/Corpus/media"
ff() { ffmpeg -v error -y -fflags +bitexact -flags:v +bitexact -flags:a +bitexact "$@"; }
tone() { echo "sine=frequency=440:sample_rate=$1:duration=$2"; }
video() { echo "testsrc=size=32x32:rate=10:duration=$1"; }

ff -f lavfi -i "$(tone 8000 0.1)" -c:a pcm_s16le -map_metadata -1 tone.wav
ff -f lavfi -i "$(tone 8000 0.2)" -ac 2 -c:a pcm_u8 -map_metadata -1 stereo-u8.wav
ff -f lavfi -i "$(tone 8000 0.3)" -c:a libmp3lame -b:a 8k -map_metadata -1 -id3v2_version 0 -write_xing 0 tone.mp3
ff -f lavfi -i "$(tone 8000 0.2)" -c:a flac -map_metadata -1 tone.flac
ff -f lavfi -i "$(tone 8000 0.3)" -c:a libvorbis -q:a 0 -map_metadata -1 tone.ogg
ff -f lavfi -i "$(tone 8000 0.3)" -c:a aac -b:a 16k -map_metadata -1 tone.m4a
ff -f lavfi -i "$(video 0.3)" -f lavfi -i "$(tone 8000 0.3)" -c:v libx264 -preset ultrafast -g 3 \
   -pix_fmt yuv420p -c:a aac -b:a 16k -map_metadata -1 -movflags +faststart av.mp4
ff -f lavfi -i "$(video 0.3)" -f lavfi -i "$(tone 8000 0.3)" -c:v libvpx -b:v 20k -c:a libvorbis -q:a 0 \
   -map_metadata -1 av.mkv
ff -f lavfi -i "$(video 0.3)" -f lavfi -i "$(tone 48000 0.2)" -c:v libx264 -preset ultrafast -g 3 \
   -pix_fmt yuv420p -c:a libopus -b:a 8k -map_metadata -1 h264-opus.mkv
ls -l
du -cb . | tail -1

# Fuzz/Corpus/containers: the seeds of fuzz-containers (GraphKit's container library alone),
# which also reads the files above. Small ISO-BMFF files of each kind the library meets: index
# first or last, an edit list (ffmpeg's AAC), a display matrix, QuickTime, fragments (ffmpeg's
# and GStreamer's), and those of GStreamer's muxers that sink.mp4 edits.
cd ../containers
ff -f lavfi -i "$(tone 8000 0.2)" -c:a aac -b:a 16k -map_metadata -1 -movflags +faststart edit-list.m4a
ff -f lavfi -i "$(video 0.2)" -c:v libx264 -preset ultrafast -g 2 -pix_fmt yuv420p -map_metadata -1 \
   -metadata:s:v:0 rotate=90 rotated.mp4
ff -f lavfi -i "$(video 0.2)" -f lavfi -i "$(tone 8000 0.2)" -c:v libx264 -preset ultrafast -g 2 \
   -pix_fmt yuv420p -c:a pcm_s16le -map_metadata -1 quicktime.mov
ff -f lavfi -i "$(video 0.3)" -f lavfi -i "$(tone 8000 0.3)" -c:v libx264 -preset ultrafast -g 1 \
   -pix_fmt yuv420p -c:a aac -b:a 16k -map_metadata -1 -movflags frag_keyframe+empty_moov+default_base_moof fragmented.mp4
gst() { gst-launch-1.0 -q "$@" >/dev/null; }
gst audiotestsrc num-buffers=4 samplesperbuffer=1024 ! audio/x-raw,rate=8000 ! avenc_aac ! mp4mux faststart=true \
  ! filesink location=gst-faststart.m4a
gst videotestsrc num-buffers=4 ! video/x-raw,width=32,height=32,framerate=10/1 ! x264enc speed-preset=ultrafast \
  ! mp4mux fragment-duration=100 ! filesink location=gst-fragmented.mp4
gst videotestsrc num-buffers=3 ! video/x-raw,width=32,height=32,framerate=10/1 ! x264enc speed-preset=ultrafast \
  ! qtmux ! filesink location=gst-quicktime.mov
ls -l
du -cb . | tail -1

# Tagged files (MediaMetadata, issue 31): every tag format, with non-ASCII text, and an 8x8 PNG
# as cover art where the format holds one.
tags=(-metadata "title=Café – 東京" -metadata artist=Zoë -metadata album=Ålbum -metadata track=3/10 -metadata date=2024)
ff -f lavfi -i color=c=red:s=8x8 -frames:v 1 /tmp/graphkit-corpus-cover.png
cover=(-i /tmp/graphkit-corpus-cover.png -map 0 -map 1 -c:v copy -disposition:v attached_pic)
ff -f lavfi -i "$(tone 8000 0.1)" "${cover[@]}" -c:a aac -b:a 16k "${tags[@]}" tags.m4a
ff -f lavfi -i "$(tone 8000 0.1)" "${cover[@]}" -c:a libmp3lame -b:a 8k -id3v2_version 3 -write_xing 0 "${tags[@]}" tags-id3v23.mp3
ff -f lavfi -i "$(tone 8000 0.1)" "${cover[@]}" -c:a libmp3lame -b:a 8k -id3v2_version 4 -write_xing 0 "${tags[@]}" tags-id3v24.mp3
ff -f lavfi -i "$(tone 8000 0.1)" "${cover[@]}" -c:a flac "${tags[@]}" tags.flac
ff -f lavfi -i "$(tone 48000 0.1)" -c:a libopus -b:a 8k "${tags[@]}" tags.opus
ff -f lavfi -i "$(tone 8000 0.1)" -c:a pcm_s16le -movflags use_metadata_tags "${tags[@]}" \
   -metadata "com.apple.quicktime.location.ISO6709=+48.8577+002.2950/" tags-keys.mov
rm -f /tmp/graphkit-corpus-cover.png
ls -l tags*

# Hostile nesting (issue 47, ContainerLimits): an index whose udta, and a udta whose meta, nest 40
# deep, past the limit of 32, so that the fuzzers start at both sides of it.
python3 - <<'PY'
import struct
def box(t, body): return struct.pack('>I', 8 + len(body)) + t + body
ftyp = box(b'ftyp', b'isom' + struct.pack('>I', 512) + b'isomiso2mp41')
mvhd = box(b'mvhd', bytes(12) + struct.pack('>II', 1000, 0) + struct.pack('>IH', 0x10000, 0x100) + bytes(10)
           + struct.pack('>9I', 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000) + bytes(24) + struct.pack('>I', 2))
udta = meta = b''
for _ in range(40):
    udta, meta = box(b'udta', udta), box(b'meta', bytes(4) + meta)
open('nested-udta.mp4', 'wb').write(ftyp + box(b'moov', mvhd + udta))
open('nested-meta.mp4', 'wb').write(ftyp + box(b'moov', mvhd + box(b'udta', meta)))
PY
ls -l nested-*

# Photos (issue 72, HEIFFile and EXIFTags): a HEIC with a thumbnail item, one with a camera's
# EXIF (exiftool writes it into a JPEG, heif-enc keeps it as an Exif item), an AVIF with alpha.
ff -f lavfi -i testsrc2=s=64x64 -frames:v 1 /tmp/graphkit-corpus-photo.png
heif-enc -q 30 -t 32 -o photo-thumb.heic /tmp/graphkit-corpus-photo.png >/dev/null
ff -f lavfi -i testsrc2=s=64x48 -frames:v 1 /tmp/graphkit-corpus-photo.jpg
exiftool -q -overwrite_original -Make=Apple -Model="iPhone 15 Pro" -Orientation#=6 -DateTimeOriginal="2024:05:01 12:34:56" \
  -OffsetTimeOriginal=+02:00 -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=E /tmp/graphkit-corpus-photo.jpg
heif-enc -q 30 -o photo-exif.heic /tmp/graphkit-corpus-photo.jpg >/dev/null
ff -f lavfi -i testsrc2=s=32x32 -frames:v 1 -vf "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'" /tmp/graphkit-corpus-photo.png
heif-enc -A -q 30 -o photo-alpha.avif /tmp/graphkit-corpus-photo.png >/dev/null
# WebP, GIF and TIFF (WebPFile, GIFFile, TIFFFile): an animated WebP with the camera's EXIF
# above, an animated GIF of partial frames, a TIFF of two pages with a make and an orientation.
ff -f lavfi -i testsrc2=s=24x16:r=10:d=0.3 -vf "split[a][b];[a]palettegen[p];[b][p]paletteuse" -loop 2 photo-anim.gif
ff -f lavfi -i testsrc2=s=24x16 -frames:v 1 /tmp/graphkit-corpus-photo.png
ff -f lavfi -i color=c=red:s=24x16 -frames:v 1 /tmp/graphkit-corpus-photo2.png
img2webp -lossless -d 50 /tmp/graphkit-corpus-photo.png -lossy -q 20 /tmp/graphkit-corpus-photo2.png -o /tmp/graphkit-corpus-anim.webp >/dev/null 2>&1
exiftool -b -EXIF /tmp/graphkit-corpus-photo.jpg >/tmp/graphkit-corpus.exif
webpmux -set exif /tmp/graphkit-corpus.exif /tmp/graphkit-corpus-anim.webp -o photo-anim.webp >/dev/null
ff -i /tmp/graphkit-corpus-photo.png -pix_fmt rgba /tmp/graphkit-corpus-page.tif
tiffset -s 274 6 /tmp/graphkit-corpus-page.tif && tiffset -s 271 Scanner /tmp/graphkit-corpus-page.tif
tiffcp /tmp/graphkit-corpus-page.tif /tmp/graphkit-corpus-page.tif photo-pages.tif
rm -f /tmp/graphkit-corpus-photo.png /tmp/graphkit-corpus-photo2.png /tmp/graphkit-corpus-photo.jpg /tmp/graphkit-corpus-anim.webp \
  /tmp/graphkit-corpus.exif /tmp/graphkit-corpus-page.tif
ls -l photo-*
