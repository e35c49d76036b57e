#!/usr/bin/env bash
# GraphKit as a client package gets it (README, "Add it to your package"): `make test-consumer`.
#  1. A clone of this tree as it stands (tracked files and new ones git does not ignore), one
#     commit tagged with the release version (graphkit_plugin.h's GRAPHKIT_VERSION), reached by
#     a file:// URL: what SwiftPM fetches from a repository by URL.
#  2. A package made with `swift package init`, given Tests/Consumer's manifest (the URL and
#     `from:` the version put in) and its sources: a program importing AVFoundation, written as
#     on a Mac, and a graph composed in code with a node of the package's own; a `swift test` of
#     that node with NodeHarness.
#  3. Built and run; its tests run. Each step with a time limit; any failure fails the target.
# In CONSUMER_DIR (default .build/consumer), made anew each run. SwiftPM's shared cache of
# repositories is not used: the tag names a new commit each run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${CONSUMER_DIR:-$root/.build/consumer}
version=$(sed -n 's/^#define GRAPHKIT_VERSION "\(.*\)"$/\1/p' Sources/CGraphKitPlugin/include/graphkit_plugin.h)
[[ -n $version ]] || { echo "test-consumer: no GRAPHKIT_VERSION in graphkit_plugin.h" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/graphkit" "$work/MediaApp"
# 1. The clone: the work tree's files as git sees them (deleted ones skipped), one commit, the tag.
# A tree without its .git (make test-debian13 copies it so) is taken less its build folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done \
    | tar --null -T - -cf - | tar -xf - -C "$work/graphkit"
else
  tar --exclude='./.build' --exclude='./.build-*' --exclude='./.build_*' --exclude='*/.build' --exclude='./out' \
    --exclude='./Package.resolved' -cf - . | tar -xf - -C "$work/graphkit"
fi
git -C "$work/graphkit" init -q
git -C "$work/graphkit" add -A
git -C "$work/graphkit" -c user.name=test-consumer -c user.email=test-consumer@localhost commit -qm "GraphKit $version"
git -C "$work/graphkit" tag "$version"

# 2. The client package.
cd "$work/MediaApp"
swift package init --type executable --name MediaApp >/dev/null
rm -rf Sources Tests
cp -R "$root/Tests/Consumer/Sources" "$root/Tests/Consumer/Tests" .
sed -e "s|@GRAPHKIT_URL@|file://$work/graphkit|" -e "s|@GRAPHKIT_VERSION@|$version|" \
  "$root/Tests/Consumer/Package.swift" > Package.swift

# 3. Build, run, test.
timeout --kill-after=30 30m swift build --disable-dependency-cache --build-tests
mkdir -p "$work/out"
timeout --kill-after=10 5m ./.build/debug/MediaApp "$work/out"
timeout --kill-after=10 10m swift test --skip-build --disable-dependency-cache
echo "test-consumer: GraphKit $version by URL: built, ran, tested"
