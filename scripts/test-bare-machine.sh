#!/usr/bin/env bash
# Checks that a truly bare machine needs no step by hand: in a fresh minimal Debian root
# (debootstrap --variant=minbase, plus only git and make, and the Swift toolchain mounted on
# PATH), a fresh clone of this repository's HEAD runs `make test` and it passes. Everything else
# (the toolchain's own libraries, GStreamer, the test tools, python3-pip, then PyPI's packages)
# must come from the project's own scripts/install-deps.sh, which `make test` runs first.
#
#   scripts/test-bare-machine.sh             # Debian 12 (bookworm)
#   scripts/test-bare-machine.sh trixie      # Debian 13
#   scripts/test-bare-machine.sh bookworm 'make run'
#
# The root is made anew every time (nothing cached: that is the point) under GRAPHKIT_ROOT_CACHE
# (default /var/cache/graphkit) and deleted afterwards, unless KEEP_ROOT=1. What the machine
# gives every program here passes into the root as it would on a bare machine of this network:
# DNS, the certificate authorities it trusts, the Swift package mirror git is pointed at
# (scripts/debian-root.sh). Needs root. Exit status: the command's, or 70 if the root cannot be made.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/debian-root.sh
source "$here/debian-root.sh"

suite=${1:-bookworm}
command=${2:-make test}
[[ $suite == bookworm || $suite == trixie ]] || { echo "usage: $0 [bookworm|trixie] [COMMAND]" >&2; exit 64; }
started=$(date +%s)
start_root_script "$0"
root=$(root_cache)/bare-$suite-$$
cleanup() {
  if [[ ${KEEP_ROOT:-0} == 1 ]]; then note "kept $root"; else remove_root "$root"; rm -f "$root.debootstrap.log"; fi
}
trap cleanup EXIT

make_root "$suite" "$root" git,make
# A clone of HEAD, as `git clone` from the project's repository would give it (committed files
# only: nothing of this working tree's builds or changes).
git -C "$repo" bundle create -q "$root/graphkit.bundle" HEAD
made=$(date +%s)
note "bare $suite root made in $((made - started)) s; running '$command' in a fresh clone of $(git -C "$repo" rev-parse --short HEAD)"
status=0
run_in_root "$root" "" "git -c advice.detachedHead=false clone -q /graphkit.bundle /root/graphkit && cd /root/graphkit && $command" || status=$?
keep_log "$root/root/graphkit" "$repo" "bare-$suite"
note "bare $suite: '$command' exited $status after $(( $(date +%s) - made )) s (the root took $((made - started)) s; log: .build-bare-$suite/test.log)"
exit "$status"
