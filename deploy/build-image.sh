#!/usr/bin/env bash
# Builds deploy/Containerfile with podman (or buildah), pushes the image, and writes the digest
# it was pushed under into the Kubernetes manifests, so that every pod of the Job runs exactly
# that build. The base images are pinned the same way: a tag given for them is pulled once and
# replaced by the digest it resolved to, and both are recorded in the image's labels.
#
#   deploy/build-image.sh --repository registry.example.com/graphkit          # build, push, record
#   deploy/build-image.sh --repository R --archive graphkit.oci.tar             # no registry: an OCI archive
#                                                                               # (copy it with skopeo --preserve-digests)
#   deploy/build-image.sh --repository R --record sha256:<64 hex>               # only write a known digest
#   deploy/build-image.sh --local [--tag localhost/graphkit:dev]                # `make image`: no registry at all
#
# --local needs no registry and no network but the Debian archive: both bases are one image made
# here from Debian packages (debootstrap --variant=minbase bookworm from the archive the host's
# apt uses, `podman import`ed as localhost/graphkit-debian:bookworm, made again when what it is
# made of changes), named by its digest; the host's Swift toolchain (SWIFT_TOOLCHAIN, default the
# one `swift` runs from) is mounted into the build stage at /opt/swift, with the local folders
# git's url.insteadOf rewrites GitHub to (the Swift package mirror) and those settings. The image
# is tagged --tag (default localhost/graphkit:dev) and left in the local store (nothing pushed,
# no manifest changed); --iidfile FILE receives its ID (another build may move the tag). Needs
# root (debootstrap) and podman (buildah cannot mount the toolchain the same way).
#
# Options: --build-image REF, --run-image REF (default docker.io/library/swift:6.3.1-bookworm and
# its -slim), --manifests DIR (default deploy/kubernetes). CONTAINER_TOOL=podman|buildah picks
# the tool. Exit status: 64 usage, 69 neither podman nor buildah, 70 a step failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
repository="" archive="" record="" manifests="$here/kubernetes" local=0 tag="" iidfile=""
build_image="docker.io/library/swift:6.3.1-bookworm"
run_image="docker.io/library/swift:6.3.1-bookworm-slim"

usage() { echo "usage: $0 --repository REGISTRY/NAME [--archive FILE | --record sha256:DIGEST] [--build-image REF] [--run-image REF] [--manifests DIR]" >&2
          echo "       $0 --local [--tag NAME:TAG] [--iidfile FILE] [--archive FILE]" >&2; exit 64; }
fail() { echo "error: $*" >&2; exit 70; }

while (($#)); do
  case "$1" in
    --repository) repository=${2-}; shift 2 || usage ;;
    --archive) archive=${2-}; shift 2 || usage ;;
    --record) record=${2-}; shift 2 || usage ;;
    --build-image) build_image=${2-}; shift 2 || usage ;;
    --run-image) run_image=${2-}; shift 2 || usage ;;
    --manifests) manifests=${2-}; shift 2 || usage ;;
    --local) local=1; shift ;;
    --tag) tag=${2-}; shift 2 || usage ;;
    --iidfile) iidfile=${2-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
if ((local)); then
  [[ -z $repository && -z $record ]] || usage
  tag=${tag:-localhost/graphkit:dev}
else
  [[ -n $repository && -z $tag ]] || usage
fi
# A repository, not an image: no tag, no digest (the digest is what this script adds).
if [[ $repository == *@* || ${repository##*/} == *:* ]]; then
  echo "error: --repository $repository names a tag or digest; give the repository alone (REGISTRY/NAME)" >&2; exit 64
fi

# Writes `image: REPOSITORY@DIGEST` over the image of every container in the manifests.
write_digest() {
  local digest=$1
  if [[ ! $digest =~ ^sha256:[0-9a-f]{64}$ ]]; then
    echo "error: \"$digest\" is not an image digest (sha256: and 64 hexadecimal digits)" >&2; exit 64
  fi
  local changed=0 file
  for file in "$manifests"/*.yaml; do
    grep -qE '^[[:space:]]+image:' "$file" || continue
    sed -i -E "s|^([[:space:]]+image:[[:space:]]*).*$|\1$repository@$digest|" "$file"
    echo "$file: image $repository@$digest" >&2
    changed=1
  done
  ((changed)) || fail "no manifest in $manifests names an image"
}

if [[ -n $record ]]; then
  write_digest "$record"
  exit 0
fi

tool=${CONTAINER_TOOL:-}
if [[ -z $tool ]]; then
  if command -v podman >/dev/null; then tool=podman; elif command -v buildah >/dev/null; then tool=buildah; fi
fi
if [[ -z $tool ]] || ! command -v "$tool" >/dev/null; then
  echo "error: building the image needs podman or buildah (apt-get install podman); found ${tool:-neither}" >&2; exit 69
fi

# The local base: a minimal Debian 12 from the host's Debian archive, imported into the local store.
# Reused while what it is made of (suite, archive, this recipe) is the same: a label records it.
local_base() {
  [[ $(id -u) -eq 0 ]] || { echo "error: --local makes its base with debootstrap, which needs root" >&2; exit 64; }
  host_tools
  local name=localhost/graphkit-debian:bookworm key digest dir
  exec 8>"$(root_cache)/image-base.lock"
  flock 8 # two builds at once make it once
  key=$(echo "bookworm minbase $(debian_mirror) recipe=2" | sha256sum | cut -d' ' -f1)
  if [[ $(podman image inspect --format '{{index .Labels "io.graphkit.base"}}' "$name" 2>/dev/null) != "$key" ]]; then
    dir=$(root_cache)/image-base-bookworm
    make_root bookworm "$dir" "" >&2
    # No package lists, downloaded packages or debootstrap's marker in the image, and none of
    # what no run reads: documentation (not the copyright files), manual pages, translations.
    rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin "$dir/.debootstrap-done" \
      "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/usr/share/locale/*
    find "$dir/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
    tar --numeric-owner -C "$dir" -c . \
      | podman import --change 'CMD ["/bin/bash"]' --change "LABEL io.graphkit.base=$key" - "$name" >/dev/null \
      || fail "cannot import the base image $name"
    remove_root "$dir"
  fi
  digest=$(podman image inspect --format '{{.Digest}}' "$name")
  [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "no digest for $name (got \"$digest\")"
  echo "${name%:*}@$digest"
}

# REF by digest: itself; by tag: pulled, and named by the digest it resolved to.
pinned() {
  local ref=$1 name digest
  if [[ $ref == *@sha256:* ]]; then echo "$ref"; return; fi
  name=$ref
  [[ ${ref##*/} == *:* ]] && name=${ref%:*}
  "$tool" pull -q "$ref" >/dev/null || fail "cannot pull $ref"
  if [[ $tool == buildah ]]; then
    digest=$(buildah inspect --type image --format '{{.FromImageDigest}}' "$ref")
  else
    digest=$(podman image inspect --format '{{.Digest}}' "$ref")
  fi
  [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "no digest for $ref (got \"$digest\")"
  echo "$name@$digest"
}
local_options=()
if ((local)); then
  [[ $tool == podman ]] || { echo "error: --local builds with podman (it mounts the Swift toolchain into the build)" >&2; exit 69; }
  # shellcheck source=scripts/debian-root.sh
  source "$root/scripts/debian-root.sh"  # make_root, git_local_mirrors, SWIFT_TOOLCHAIN
  build_image=$(local_base) || exit
  run_image=$build_image
  toolchain=$SWIFT_TOOLCHAIN
  [[ -x $toolchain/usr/bin/swift ]] || { echo "error: no Swift toolchain at $toolchain (set SWIFT_TOOLCHAIN)" >&2; exit 69; }
  local_options+=(-v "$toolchain:/opt/swift:ro")
  gitconfig=$(mktemp)
  trap 'rm -f "$gitconfig"' EXIT
  while IFS=$'\t' read -r base value; do
    [[ -n $base ]] || continue
    git config --file "$gitconfig" --add "url.$base.insteadOf" "$value"
    local_options+=(-v "$base:$base:ro")
  done <<<"$(git_local_mirrors)"
  local_options+=(-v "$gitconfig:/etc/gitconfig:ro" --pull=never)
  [[ -z $iidfile ]] || local_options+=(--iidfile "$iidfile")
else
  build_image=$(pinned "$build_image")
  run_image=$(pinned "$run_image")
fi
echo "base images: $build_image, $run_image" >&2

revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
[[ -z $(git -C "$root" status --porcelain 2>/dev/null) ]] || revision="$revision-modified"
tag=${tag:-"$repository:${revision:0:12}"}
labels=(--label "org.opencontainers.image.revision=$revision"
        --label "org.opencontainers.image.base.name=$run_image"
        --label "io.graphkit.build-image=$build_image")
build=(-f "$here/Containerfile" --build-arg "SWIFT_BUILD_IMAGE=$build_image" --build-arg "SWIFT_RUN_IMAGE=$run_image"
       "${labels[@]}" -t "$tag" "$root")
if [[ $tool == buildah ]]; then buildah bud --isolation chroot "${build[@]}"; else podman build "${local_options[@]}" "${build[@]}"; fi

if ((local)); then
  echo "built $tag: $(podman image inspect --format '{{.Id}} {{.Size}}' "$tag" | awk '{ printf "%s, %.0f MB", substr($1, 1, 12), $2 / 1e6 }')" >&2
  [[ -z $archive ]] || podman save --format oci-archive -o "$archive" "$tag" || fail "cannot write $archive"
  exit 0
fi

digestfile=$(mktemp)
trap 'rm -f "$digestfile"' EXIT
if [[ -n $archive ]]; then
  "$tool" push --digestfile "$digestfile" "$tag" "oci-archive:$archive" || fail "cannot write $archive"
else
  "$tool" push --digestfile "$digestfile" "$tag" "docker://$tag" || fail "cannot push $tag"
fi
write_digest "$(cat "$digestfile")"
