# Debian roots for running GraphKit's build and tests on another Debian release than the host's
# (scripts/test-debian.sh, scripts/test-bare-machine.sh). Sourced, not run. Needs root.
#
# A root is made with debootstrap (--variant=minbase: no more than apt, dpkg and the essential
# packages) from the package archive the host itself uses, plus only the packages named; the
# project's own scripts/install-deps.sh installs everything else inside it, as on a bare machine.
# Commands run in it through `chroot`, inside a mount namespace of their own (unshare): proc,
# sys and dev, the Swift toolchain (read-only, at its own path) and the local folders git's
# `url.<base>.insteadOf` rewrites point at (the Swift package mirror, read-only) are mounted
# there only, so that they are gone when the command ends, however it ends (even SIGKILL); the
# trap unmounts them too, in order, when the shell in the namespace exits normally.

SWIFT_TOOLCHAIN=${SWIFT_TOOLCHAIN:-$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")}

die() { echo "error: $*" >&2; exit 70; }
note() { echo "[$(date +%T)] $*" >&2; }

# The Debian archive the host's apt uses (its first Debian `URIs:`/`deb` entry that is not the
# security archive), unless DEBIAN_MIRROR names one.
debian_mirror() {
  if [[ -n ${DEBIAN_MIRROR:-} ]]; then echo "$DEBIAN_MIRROR"; return; fi
  local url
  url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | sed -nE 's/^[[:space:]]*(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)([a-z]+:\/\/[^[:space:]]+).*/\3/p' \
        | grep -v -- '-security' | head -1)
  echo "${url:-http://deb.debian.org/debian}"
}

# The start of every script that uses a root: it must run as root (debootstrap, mount, chroot),
# and the host tools it uses are installed if missing.
start_root_script() {
  [[ $(id -u) -eq 0 ]] || { echo "error: $1 needs root (debootstrap, mount, chroot)" >&2; exit 64; }
  host_tools
}

# Copies a run's test log (the tree's .build/test.log, in the root) to .build-NAME/test.log in
# the host's tree.
keep_log() {
  local tree=$1 repo=$2 name=$3
  mkdir -p "$repo/.build-$name"
  cp "$tree/.build/test.log" "$repo/.build-$name/test.log" 2>/dev/null || true
}

# Installs the host tools these scripts use, if missing (apt).
host_tools() {
  local missing=() tool
  for tool in debootstrap:debootstrap rsync:rsync git:git unshare:util-linux; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
  done
  if ((${#missing[@]})); then
    note "installing on the host: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# The folder that keeps roots between runs: GRAPHKIT_ROOT_CACHE, else /var/cache/graphkit.
root_cache() {
  local dir=${GRAPHKIT_ROOT_CACHE:-/var/cache/graphkit}
  mkdir -p "$dir" && echo "$dir"
}

# Fails if anything is mounted at or under DIR (a root is never deleted through a mount).
assert_unmounted() {
  local dir
  dir=$(readlink -f "$1")
  if awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    die "$dir still has mounts under it (findmnt -R $dir); unmount them first"
  fi
}

remove_root() {
  [[ -e $1 ]] || return 0
  assert_unmounted "$1"
  rm -rf --one-file-system "$1"
}

# debootstrap --variant=minbase SUITE into DIR, with the packages INCLUDE (comma-separated).
# A DIR that a previous call finished for the same arguments is kept (a later step failed).
make_root() {
  local suite=$1 dir=$2 include=$3 mirror
  mirror=$(debian_mirror)
  if [[ -f $dir/.debootstrap-done && $(cat "$dir/.debootstrap-done") == "$suite $include $mirror" ]]; then
    note "reusing the finished debootstrap in $dir"
    return
  fi
  note "debootstrap --variant=minbase ${include:+--include=$include }$suite $dir $mirror"
  remove_root "$dir"
  debootstrap --variant=minbase ${include:+--include="$include"} "$suite" "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 \
    || { tail -20 "$dir.debootstrap.log" >&2; die "debootstrap $suite failed (log: $dir.debootstrap.log)"; }
  rm -f "$dir.debootstrap.log"
  # apt inside: what the host's apt would fetch from, nothing left behind by downloads.
  echo "deb $mirror $suite main" >"$dir/etc/apt/sources.list"
  echo "$suite $include $mirror" >"$dir/.debootstrap-done"
}

# The git url.<base>.insteadOf settings (system and global) whose base is a local folder: each is
# written into the root's /etc/gitconfig, and the folder is mounted there read-only.
git_local_mirrors() {
  { git config --system --get-regexp '^url\..*\.insteadof$' 2>/dev/null
    git config --global --get-regexp '^url\..*\.insteadof$' 2>/dev/null; } \
    | while read -r key value; do
        local base=${key#url.}; base=${base%.insteadof}
        [[ $base == /* && -d $base ]] && printf '%s\t%s\n' "$base" "$value"
      done | sort -u
}

# Runs COMMAND (a bash command line) as root inside ROOT, with the mounts above and, for each
# extra `HOSTDIR:ROOTDIR[:ro]` in BINDS (an array name), that folder too. Returns its status.
run_in_root() {
  local root=$1 binds_name=$2 command=$3
  local -a binds=()
  [[ -n $binds_name ]] && eval "binds=(\"\${${binds_name}[@]}\")"
  [[ -x $SWIFT_TOOLCHAIN/usr/bin/swift ]] || die "no Swift toolchain at $SWIFT_TOOLCHAIN (set SWIFT_TOOLCHAIN)"
  local mirrors
  mirrors=$(git_local_mirrors)
  # The root's git rewrites GitHub addresses to the same local mirror as the host's.
  rm -f "$root/etc/gitconfig"
  local base value
  while IFS=$'\t' read -r base value; do
    [[ -n $base ]] || continue
    git config --file "$root/etc/gitconfig" --add "url.$base.insteadOf" "$value"
    binds+=("$base:$base:ro")
  done <<<"$mirrors"
  binds=("$SWIFT_TOOLCHAIN:$SWIFT_TOOLCHAIN:ro" "${binds[@]}")
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  cp /etc/hosts "$root/etc/hosts" 2>/dev/null || true
  # The host's certificate authorities (a machine behind an inspecting proxy trusts its CA):
  # added to the root's own by update-ca-certificates, when the root has it (install-deps.sh
  # installs ca-certificates, whose set-up includes this folder).
  if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cmp -s /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/host.crt" \
      || cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/host.crt"
    command="if command -v update-ca-certificates >/dev/null; then update-ca-certificates >/dev/null 2>&1; fi; $command"
  fi

  local script
  script=$(cat <<'EOF'
set -euo pipefail
root=$1 command=$2; shift 2
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" || true; done
}
trap cleanup EXIT
mount --make-rprivate /
mount -t proc proc "$root/proc"; mounted+=("$root/proc")
mount --rbind /sys "$root/sys"; mount --make-rslave "$root/sys"; mounted+=("$root/sys")
mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"; mounted+=("$root/dev")
mkdir -p "$root/run" && mount -t tmpfs -o mode=755 tmpfs "$root/run"; mounted+=("$root/run")
for bind in "$@"; do
  IFS=: read -r from to mode <<<"$bind"
  mkdir -p "$root$to"
  mount --bind "$from" "$root$to"; mounted+=("$root$to")
  if [[ $mode == ro ]]; then mount -o remount,bind,ro "$root$to"; fi
done
# The machine's own settings for reaching package registries pass through (a proxy, pip's).
passed=()
for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL PIP_DEFAULT_TIMEOUT; do
  if [[ -n ${!name:-} ]]; then passed+=("$name=${!name}"); fi
done
env -i HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM=${TERM:-dumb} CI=${CI:-} "${passed[@]}" \
  PATH="$TOOLCHAIN/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  chroot "$root" /bin/bash -c "$command"
EOF
)
  TOOLCHAIN=$SWIFT_TOOLCHAIN unshare --mount --fork bash -c "$script" run-in-root "$root" "$command" "${binds[@]}"
}
