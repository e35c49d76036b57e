#!/usr/bin/env bash
# Installs what GraphKit needs to build and test, only what is missing: Debian packages with apt
# first (python3-pip and python3-venv among them), then the two test tools that come from PyPI.
# Called by `make run`, `make test` and `make bench`; safe to run again. Works on a bare Debian
# 12 or 13 (debootstrap --variant=minbase, plus git, make and the Swift toolchain on PATH):
# scripts/test-bare-machine.sh checks that.
# Options add what one task needs: --bench (make bench), --stress (the tests under load,
# scripts/stress-test.sh), --image (make image: podman and what makes its base image);
# --build-only installs only what building graphctl needs (deploy/Containerfile's build stage:
# no test tools, nothing from PyPI); --list prints the Debian packages it would install.
set -euo pipefail

# What building needs.
build_packages=(
  # The Swift toolchain's own needs (it is not a Debian package): the C and C++ headers, crt
  # files, libstdc++ and binutils it links with (g++), and the libraries its tools load. `curl`
  # brings libcurl under one name on Debian 12 (libcurl4) and 13 (libcurl4t64).
  g++
  git
  curl
  libxml2
  libsqlite3-0
  libncurses6
  libedit2
  tzdata
  ca-certificates  # PyPI (below) and the Swift package mirrors over HTTPS
  make
  pkg-config
  libgstreamer1.0-dev
  libgstreamer-plugins-base1.0-dev
  libx264-dev    # encode.h264's encoder (GstGraphKit/gkx264enc) links libx264; graphctl then needs libx264-164
  libavcodec-dev # GstGraphKit/gkavdec decodes H.264/HEVC with libavcodec (59 on Debian 12, 61 on 13; gstreamer1.0-libav's too)
  zlib1g-dev     # waveform PNGs are compressed with zlib
  libjpeg-dev    # thumbnails and ImageIO's JPEGs are written by libjpeg-turbo (Nodes' JPEGEncoder, CImageCodecs)
  libcairo2-dev  # the AVFoundation product's CGContext draws with Cairo; the picture tests read PNGs with it
  libpango1.0-dev  # the AVFoundation product's CoreText lays out and draws lines with Pango over Cairo (pangocairo)
  libpipewire-0.3-dev  # its headers: GraphKit lists PipeWire's cameras and microphones itself (libpipewire, opened at run time)
  libgstreamer-plugins-bad1.0-dev  # GstGraphKit/gkwhipsink (sink.whip) uses webrtcbin's session descriptions
  libheif-dev    # ImageCodecs reads HEIC and AVIF through libheif (1.15 on Debian 12, 1.19 on 13)
  libwebp-dev    # with libgif-dev and libtiff-dev: ImageCodecs reads WebP (libwebp's animation decoder),
  libgif-dev     # GIF (giflib) and TIFF (libtiff)
  libtiff-dev
)
# libheif's codecs: built into libheif1 on Debian 12; plugins of their own on 13 (not installed
# with it here, as recommends are not): HEVC and AV1 decoders, and the encoders heif-enc uses.
if grep -qsE '^VERSION_ID="?(1[3-9]|[2-9][0-9])' /etc/os-release; then
  build_packages+=(libheif-plugin-libde265 libheif-plugin-ffmpegdec libheif-plugin-dav1d libheif-plugin-aomdec
                   libheif-plugin-x265 libheif-plugin-aomenc)
fi
# What running and testing need besides.
packages=(
  "${build_packages[@]}"
  gstreamer1.0-tools
  gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly
  gstreamer1.0-libav
  gstreamer1.0-x
  gstreamer1.0-alsa
  gstreamer1.0-pipewire   # pipewiresrc: capture.video and capture.audio with device "pipewire:NODE"
  gstreamer1.0-libcamera  # libcamerasrc: capture.video with device "libcamera:NAME" (0.0.3 on Debian 12, 0.4 on 13)
  librsvg2-bin   # rsvg-convert: the picture tests render the SVGs they check
  fonts-dejavu-core  # a face for each of fontconfig's sans-serif, monospace and serif: CoreText's tests draw with them
  ffmpeg
  lame          # LAME itself, for test MP3s with its own gapless tag
  time          # /usr/bin/time -f %M: HostileClaimsTests measures each command's peak memory
  xvfb          # an X server without a screen, for the tests of sink.preview (and scripts/leak-check.sh)
  python3-xlib  # what those tests do to its windows: find, grab the pixels, close (Tests/Fixtures/x11)
  weston        # a Wayland compositor without a screen (its headless backend), for sink.preview under Wayland
  srt-tools     # srt-live-transmit: the far end of the SRT tests (sink.srt, source.srt)
  nginx         # with libnginx-mod-rtmp: the RTMP server of sink.rtmp's tests (started by the test, not as a service)
  libnginx-mod-rtmp
  python3-gi    # with gir1.2-gst-rtsp-server-1.0: GStreamer's RTSP server library from Python, the server of
  gir1.2-gst-rtsp-server-1.0  # source.rtsp's tests (Tests/Fixtures/rtsp-server.py, run by /usr/bin/python3)
  glib-networking  # GIO's TLS: source.rtsp's rtsps:// (rtspsrc's TLS connection)
  gstreamer1.0-nice  # libnice's ICE, which webrtcbin needs: sink.whip
  gir1.2-gst-plugins-bad-1.0  # GstWebRTC from Python: the WHIP endpoint of sink.whip's tests (Tests/Fixtures/whip-server.py)
  pipewire      # with pipewire-bin, wireplumber and dbus-daemon: the PipeWire of PipeWireCaptureTests, started by the
  pipewire-bin  # test in a private runtime folder (the daemon, pw-cli), WirePlumber to link streams to their targets
  wireplumber   # (PipeWire links nothing by itself), and the D-Bus session bus WirePlumber 0.4 will not start without
  dbus-daemon
  libheif-examples  # heif-enc and heif-convert: the HEIC and AVIF test pictures, and the decode they are checked against
  webp          # cwebp, dwebp, img2webp, webpmux: the WebP test pictures, and the decode they are checked against
  libtiff-tools # tiffcp and tiffset: the TIFF tests' pages and tags
  libimage-exiftool-perl  # exiftool: the EXIF the photo tests write, and read back to check ImageIO's properties
  openssl       # a certificate authority and server certificates made by the rtsps:// tests
  python3-pip   # kubernetes-validate is installed with it (below): apt first, then PyPI
  python3-venv  # the venv checkov is installed in (below)
)
list=0 build_only=0
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(hyperfine libvips-tools heif-thumbnailer) ;;  # the photo job's anchors too
    --stress) packages+=(stress) ;;
    --image) packages+=(podman runc debootstrap) ;;
    --build-only) build_only=1 ;;
    --list) list=1 ;;
    *) echo "usage: $0 [--bench] [--stress] [--image] [--build-only] [--list]" >&2; exit 64 ;;
  esac
done
((build_only)) && packages=("${build_packages[@]}")

if ((list)); then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "Installing missing Debian packages: ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
((build_only)) && exit 0

# kubernetes-validate checks deploy/kubernetes/ against the Kubernetes API schema, offline (it
# ships the schemas): Tests/graphctlTests/KubernetesManifestTests.swift runs it with python3 -m.
if ! python3 -c "import kubernetes_validate" 2>/dev/null; then
  echo "Installing kubernetes-validate (PyPI) for the manifest tests" >&2
  python3 -m pip install --quiet --disable-pip-version-check kubernetes-validate==1.37.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages kubernetes-validate==1.37.0
fi

# checkov (PyPI) runs its Kubernetes policies over deploy/kubernetes/ offline, for
# KubernetesManifestTests. It brings many pinned dependencies, so it lives in a venv of its own
# (python3-venv above), where it cannot change kubernetes-validate's.
checkov_venv="${HOME}/.cache/graphkit/checkov-3.3.30"
if [[ ! -x $checkov_venv/bin/checkov ]]; then
  echo "Installing checkov 3.3.30 (PyPI) into $checkov_venv for the manifest tests" >&2
  rm -rf "$checkov_venv"
  python3 -m venv "$checkov_venv"
  "$checkov_venv/bin/python" -m pip install --quiet --disable-pip-version-check checkov==3.3.30
fi
