#!/usr/bin/env bash
# Runs GraphKit's whole suite (`make test`) on another Debian release than the host's, in a root
# made with debootstrap from the host's own package archive: `make test-debian13` runs
#
#   scripts/test-debian.sh trixie            # Debian 13, GStreamer 1.26
#   scripts/test-debian.sh bookworm          # Debian 12, GStreamer 1.22 (as the host)
#   scripts/test-debian.sh trixie 'make test-build && swift test --skip-build --filter Gapless'
#
# The root (debootstrap --variant=minbase, plus git and make) is kept between runs in
# GRAPHKIT_ROOT_CACHE (default /var/cache/graphkit), as debian13-root for trixie, with everything
# the project's own scripts/install-deps.sh --stress installed in it (apt first, then PyPI). It is
# reused when complete and made for the same package list, and made again when the list changes
# (install-deps.sh --list, the suite or the archive). The Swift toolchain and the local Swift
# package mirror are mounted into it read-only at their own paths (scripts/debian-root.sh).
#
# The working tree (less what .gitignore names, and .git) is copied to /build/graphkit in the
# root and built there with its own .build folders, which stay in the root: a second run builds
# only what changed, and the host's build folders are never touched. The log is left in
# .build-<release>/test.log. Needs root (debootstrap, mounts, chroot). Exit status: the
# command's, or 70 when the root cannot be made.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
# shellcheck source=scripts/debian-root.sh
source "$here/debian-root.sh"

suite=${1:-trixie}
# The client-package check (test-consumer) runs once, on the host: SwiftPM and the toolchain
# are the same here, and it builds GraphKit cold each time.
command=${2:-make test CONSUMER_TEST=}
case "$suite" in
  trixie) name=debian13 ;;
  bookworm) name=debian12 ;;
  *) echo "usage: $0 [trixie|bookworm] [COMMAND]" >&2; exit 64 ;;
esac
started=$(date +%s)
start_root_script "$0"
cache=$(root_cache)
root=$cache/$name-root
include=git,make
exec 9>"$cache/$name.lock"
flock 9 # one run per root at a time

# What the root is made of: if any of it changes, the root is made again.
key=$( { echo "suite=$suite include=$include mirror=$(debian_mirror) layout=1"
         bash "$repo/scripts/install-deps.sh" --list --stress; } | sha256sum | cut -d' ' -f1)
if [[ -f $root/.graphkit-root && $(cat "$root/.graphkit-root") == "$key" ]]; then
  note "reusing the $name root $root"
else
  note "making the $name root in $root (its package list changed, or it is not there)"
  make_root "$suite" "$root.new" "$include"
  mkdir -p "$root.new/tmp/graphkit-deps"
  cp "$repo/scripts/install-deps.sh" "$root.new/tmp/graphkit-deps/"
  run_in_root "$root.new" "" "bash /tmp/graphkit-deps/install-deps.sh --stress && apt-get clean" \
    || die "installing the project's packages in the $name root failed"
  rm -rf "$root.new/tmp/graphkit-deps"
  echo "$key" >"$root.new/.graphkit-root"
  remove_root "$root"
  mv "$root.new" "$root"
  note "the $name root is ready ($(du -sh --one-file-system "$root" | cut -f1))"
fi

# The tree, as a clone would have it (ignored files left out), over the previous copy, compared
# by content (-c) and with no times copied (-a less -t): a file whose content is the same keeps
# its time from the previous copy and one that changed takes the time it was copied at, so
# SwiftPM and make rebuild only what changed even from a fresh clone, where every file's time is
# the clone's (with the times copied, each CI run compiled everything: 626 s). The copy's own
# build folders are left alone.
# But a module whose dependency changed the layout of a `package` struct is not always compiled
# again (seen here: a test bundle kept its objects from before WAVEHeader gained two fields, and
# read it wrongly): when a Swift file changed, the project's own modules (each package's
# Sources/* and Tests/* targets) are compiled afresh, and only the dependencies' objects kept.
mkdir -p "$root/build/graphkit"
changes=$(rsync -rlpgoD -c --delete --itemize-changes --exclude=/.git --filter=':- .gitignore' "$repo/" "$root/build/graphkit/")
if grep -q '\.swift$' <<<"$changes"; then
  own=$(find "$repo" -name Package.swift -not -path '*/.build*' -printf '%h\n' \
          | while read -r package; do find "$package/Sources" "$package/Tests" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null || true; done | sed 'p; s/-/_/g' | sort -u)
  find "$root/build/graphkit" -path '*/.build*' -type d -name '?*.build' -prune -print | while read -r folder; do
    if grep -qxF "$(basename "$folder" .build)" <<<"$own"; then rm -rf "$folder"; fi
  done
  note "Swift files changed: the project's own modules are compiled afresh"
fi

note "running '$command' on $name ($(chroot "$root" cat /etc/debian_version), $(chroot "$root" dpkg-query -W -f='GStreamer ${Version}' libgstreamer1.0-0))"
status=0
run_in_root "$root" "" "cd /build/graphkit && $command" || status=$?

keep_log "$root/build/graphkit" "$repo" "$name"
note "$name: '$command' exited $status after $(( $(date +%s) - started )) s (log: .build-$name/test.log)"
exit "$status"
