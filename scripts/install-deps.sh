#!/usr/bin/env bash
# Installs the Debian packages GraphKit needs, only those that are missing.
# Called by `make run`, `make test` and `make bench`; safe to run again.
# Options add what one task needs: --bench (make bench), --stress (the tests under load, scripts/stress-test.sh).
set -euo pipefail

packages=(
  pkg-config
  libgstreamer1.0-dev
  libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools
  gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly
  gstreamer1.0-libav
  gstreamer1.0-x
  gstreamer1.0-alsa
  libx264-dev    # encode.h264's encoder (GstGraphKit/gkx264enc) links libx264; graphctl then needs libx264-164
  libcairo2-dev  # the picture tests read PNGs back and draw the pictures of before (graphs need none)
  zlib1g-dev     # waveform PNGs are compressed with zlib
  librsvg2-bin   # rsvg-convert: the picture tests render the SVGs they check
  ffmpeg
  lame          # LAME itself, for test MP3s with its own gapless tag
  xvfb          # an X server without a screen, for the tests of sink.preview (and scripts/leak-check.sh)
  python3-xlib  # what those tests do to its windows: find, grab the pixels, close (Tests/Fixtures/x11)
  weston        # a Wayland compositor without a screen (its headless backend), for sink.preview under Wayland
  python3-venv  # the venv checkov is installed in (below)
)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(time hyperfine) ;;
    --stress) packages+=(stress) ;;
    *) echo "usage: $0 [--bench] [--stress]" >&2; exit 64 ;;
  esac
done

# kubernetes-validate checks deploy/kubernetes/ against the Kubernetes API schema, offline (it
# ships the schemas): Tests/graphctlTests/KubernetesManifestTests.swift runs it with python3 -m.
if ! python3 -c "import kubernetes_validate" 2>/dev/null; then
  echo "Installing kubernetes-validate (PyPI) for the manifest tests" >&2
  python3 -m pip install --quiet --disable-pip-version-check kubernetes-validate==1.37.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages kubernetes-validate==1.37.0
fi

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
