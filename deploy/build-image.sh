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
#
# Options: --build-image REF, --run-image REF (default docker.io/library/swift:6.3.1-bookworm and
# its -slim), --manifests DIR (default deploy/kubernetes). CONTAINER_TOOL=podman|buildah picks
# the tool. Exit status: 64 usage, 69 neither podman nor buildah, 70 a step failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
repository="" archive="" record="" manifests="$here/kubernetes"
build_image="docker.io/library/swift:6.3.1-bookworm"
run_image="docker.io/library/swift:6.3.1-bookworm-slim"

usage() { echo "usage: $0 --repository REGISTRY/NAME [--archive FILE | --record sha256:DIGEST] [--build-image REF] [--run-image REF] [--manifests DIR]" >&2; exit 64; }
fail() { echo "error: $*" >&2; exit 70; }

while (($#)); do
  case "$1" in
    --repository) repository=${2-}; shift 2 || usage ;;
    --archive) archive=${2-}; shift 2 || usage ;;
    --record) record=${2-}; shift 2 || usage ;;
    --build-image) build_image=${2-}; shift 2 || usage ;;
    --run-image) run_image=${2-}; shift 2 || usage ;;
    --manifests) manifests=${2-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
[[ -n $repository ]] || usage
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
build_image=$(pinned "$build_image")
run_image=$(pinned "$run_image")
echo "base images: $build_image, $run_image" >&2

revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
[[ -z $(git -C "$root" status --porcelain 2>/dev/null) ]] || revision="$revision-modified"
tag="$repository:${revision:0:12}"
labels=(--label "org.opencontainers.image.revision=$revision"
        --label "org.opencontainers.image.base.name=$run_image"
        --label "io.graphkit.build-image=$build_image")
build=(-f "$here/Containerfile" --build-arg "SWIFT_BUILD_IMAGE=$build_image" --build-arg "SWIFT_RUN_IMAGE=$run_image"
       "${labels[@]}" -t "$tag" "$root")
if [[ $tool == buildah ]]; then buildah bud --isolation chroot "${build[@]}"; else podman build "${build[@]}"; fi

digestfile=$(mktemp)
trap 'rm -f "$digestfile"' EXIT
if [[ -n $archive ]]; then
  "$tool" push --digestfile "$digestfile" "$tag" "oci-archive:$archive" || fail "cannot write $archive"
else
  "$tool" push --digestfile "$digestfile" "$tag" "docker://$tag" || fail "cannot push $tag"
fi
write_digest "$(cat "$digestfile")"
