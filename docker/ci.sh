#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CI check of the Docker image with podman: builds the debootstrap base, builds the CPU image,
# runs the quickstart in it (no arguments) and a user's script (/sims/plan.tcl) with a temporary
# folder mounted at /sims, and checks the files they wrote there. Where podman cannot be
# installed or cannot run containers here it says why and exits 0 (skipped).
#
#   docker/ci.sh            FM_DOCKER_MODE=auto: `prebuilt` when $FM_BUILD_DIR (default build/)
#                           has a built bin/fullmonte, else `full`
#   FM_DOCKER_MODE=full     the user-facing multi-stage build (apt -dev packages + compile: slow)
#   FM_DOCKER_MODE=prebuilt installs $FM_BUILD_DIR (cmake --install) into a folder and builds the
#                           Dockerfile's `prebuilt` target from it: no compiler in the image build
#
# Other environment: FM_DOCKER_TAG (default localhost/fullmonte:ci), FM_DOCKER_KEEP=1 keeps the
# mounted folder, BUILDAH_ISOLATION (default chroot), FM_JOBS (default 2), and those of
# docker/build-base.sh (FM_DOCKER_CACHE...). Needs root (or sudo) for apt, debootstrap and
# rootful podman.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FM_BUILD_DIR:-$root/build}
mode=${FM_DOCKER_MODE:-auto}
tag=${FM_DOCKER_TAG:-localhost/fullmonte:ci}
base=${FM_BASE_TAG:-localhost/debian:bookworm-slim}
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
t0=$SECONDS
lap=$SECONDS
log() { echo "docker/ci.sh: $*"; }
phase() { log "$1 ($((SECONDS - lap)) s)"; lap=$SECONDS; }
skip() { log "SKIPPED: $*"; exit 0; }
fail() { log "FAILED: $*"; exit 1; }

SUDO=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    skip "needs root or password-less sudo (apt, debootstrap, rootful podman)"; fi
fi
if [ "$mode" = auto ]; then
  if [ -x "$build/bin/fullmonte" ]; then mode=prebuilt; else mode=full; fi
fi
case $mode in full|prebuilt) ;; *) fail "FM_DOCKER_MODE must be auto, full or prebuilt" ;; esac
log "mode $mode"

# ---- 1. podman (Debian's, with runc), debootstrap.
need=()
for p in podman runc fuse-overlayfs slirp4netns uidmap debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || skip "no apt-get to install ${need[*]}"
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { "${SUDO[@]}" apt-get update -qq && "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}"; } \
    >/tmp/fm-docker-apt.log 2>&1 || { tail -5 /tmp/fm-docker-apt.log; skip "could not install ${need[*]}"; }
fi
PODMAN=("${SUDO[@]}" podman)
phase "podman $("${PODMAN[@]}" --version | awk '{print $3}') ready"

# ---- 2. storage: overlay, else vfs in a store of its own (a store keeps its first driver).
if ! "${PODMAN[@]}" images >/dev/null 2>/tmp/fm-docker-storage.log; then
  log "default storage does not work ($(tail -1 /tmp/fm-docker-storage.log)); trying vfs"
  conf=${FM_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fullmonte-docker}/storage-vfs.conf
  mkdir -p "$(dirname "$conf")"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "/var/lib/containers/storage-vfs"\nrunroot = "/run/containers/storage-vfs"\n' >"$conf"
  export CONTAINERS_STORAGE_CONF=$conf
  [ ${#SUDO[@]} = 0 ] || PODMAN=("${SUDO[@]}" CONTAINERS_STORAGE_CONF="$conf" podman)
  "${PODMAN[@]}" images >/dev/null 2>/tmp/fm-docker-storage.log ||
    skip "podman has no working storage here: $(tail -1 /tmp/fm-docker-storage.log)"
fi

# ---- 3. the base image, from debootstrap (cached tarball: fast on reruns).
"${SUDO[@]}" env FM_BASE_TAG="$base" "$root/docker/build-base.sh" >/tmp/fm-docker-base.log 2>&1 || {
  tail -15 /tmp/fm-docker-base.log; skip "could not make the debootstrap base image (mirror unreachable?)"; }
phase "base image $base"

# ---- 4. how containers run here: sandboxes may refuse cgroups (crun: hybrid mode) or raising
# rlimits (podman raises nofile/nproc by default), so try runtimes and explicit limits.
n=$(ulimit -Hn); [ "$n" = unlimited ] || [ "$n" -gt 65536 ] && n=65536
runopts=()
found=0
for cand in "" "--runtime runc" "--ulimit nofile=$n:$n --ulimit nproc=32768:32768" \
            "--runtime runc --ulimit nofile=$n:$n --ulimit nproc=32768:32768"; do
  read -r -a opts <<<"$cand"
  if out=$("${PODMAN[@]}" run --rm --pull=never "${opts[@]}" "$base" true 2>&1); then
    runopts=("${opts[@]}"); found=1; break
  fi
  last=$out
done
[ "$found" = 1 ] || skip "podman cannot run a container here: $(echo "$last" | tail -1)"
log "podman run options: ${runopts[*]:-(none)}"

# ---- 5. the image.
work=$(mktemp -d /tmp/fm-docker.XXXXXX)
cleanup() { if [ -z "${FM_DOCKER_KEEP:-}" ]; then "${SUDO[@]}" rm -rf "$work"; else log "kept $work"; fi; }
trap cleanup EXIT
bargs=(--pull=never --build-arg "BASE_IMAGE=$base" --build-arg "FM_JOBS=${FM_JOBS:-2}"
       --ignorefile "$root/docker/Dockerfile.dockerignore" -f "$root/docker/Dockerfile" -t "$tag")
if [ "$mode" = prebuilt ]; then
  cmake --install "$build" --prefix "$work/prebuilt" --strip >"$work/install.log" 2>&1 || {
    cat "$work/install.log"; fail "cmake --install $build"; }
  # Runtime packages for what this build links beyond the image's defaults: the Debian packages
  # owning every shared library the installed programs and modules load (dpkg knows each file
  # under /usr/lib or /lib, whichever its package ships), plus Python where the package is in.
  extra=$(find "$work/prebuilt" -type f \( -perm -u+x -o -name '*.so*' \) -exec ldd {} + 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    while read -r lib; do dpkg -S "$lib" 2>/dev/null || dpkg -S "${lib#/usr}" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null; done |
    cut -d: -f1 | sort -u | tr '\n' ' ')
  if find "$work/prebuilt/lib" -maxdepth 3 -name fullmonte -path '*python*' | grep -q .; then
    extra="$extra python3 python3-numpy"
  fi
  log "runtime packages: $extra"
  bargs+=(--target prebuilt --build-context "fullmonte-prebuilt=$work/prebuilt" --build-arg "FM_RUNTIME_EXTRA=$extra")
fi
"${PODMAN[@]}" build "${bargs[@]}" "$root" >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log"; fail "podman build (log above)"; }
grep -h '^FullMonte [0-9.]* loads' "$work/build.log" | tail -1 || true   # (absent when cached)
phase "image $tag built ($("${PODMAN[@]}" image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"

# ---- 6. run it: the quickstart (no arguments), then a user's script; outputs land in the mount.
sims=$work/sims
mkdir -p "$sims"
chmod 0777 "$sims"   # the image runs as uid 1000, the folder is root's
cat >"$sims/plan.tcl" <<'EOF'
# A user's script: the quickstart with 2000 packets into plan-out (relative: beside this file).
set argv {plan-out 2000}
set argc 2
source $env(FM_PREFIX)/share/fullmonte/examples/quickstart.tcl
EOF
run=("${PODMAN[@]}" run --rm --pull=never "${runopts[@]}" -v "$sims:/sims" "$tag")
"${run[@]}" >"$work/quickstart.log" 2>&1 || { cat "$work/quickstart.log"; fail "quickstart in the image"; }
sed 's/^/  | /' "$work/quickstart.log"
"${run[@]}" /sims/plan.tcl >"$work/plan.log" 2>&1 || { cat "$work/plan.log"; fail "/sims/plan.tcl in the image"; }
phase "ran the quickstart and /sims/plan.tcl"

# ---- 7. the files, beside the mount.
want=(model.mesh fluence.txt dvh.txt summary.txt)
if "${PODMAN[@]}" run --rm --pull=never "${runopts[@]}" --entrypoint sh "$tag" -c 'command -v fullmonte-vtk' >/dev/null; then
  want+=(fluence.vtu fluence.png)   # built with VTK: the mesh file and the rendered slice too
fi
bad=0
for d in quickstart-out plan-out; do
  for f in "${want[@]}"; do
    if [ -s "$sims/$d/$f" ]; then echo "  ok  $d/$f ($(stat -c '%s bytes, uid %u' "$sims/$d/$f"))"
    else echo "  MISSING $d/$f"; bad=1; fi
  done
done
if [ -s "$sims/quickstart-out/fluence.png" ] &&
   [ "$(head -c 8 "$sims/quickstart-out/fluence.png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
  echo "  fluence.png is not a PNG"; bad=1
fi
[ "$bad" = 0 ] || fail "outputs missing in the mounted folder"
phase "outputs checked"
log "OK: image $tag ($mode) built and ran the quickstart in $((SECONDS - t0)) s"
