#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Makes the Debian 12 base image with debootstrap and imports it into podman, so that the
# Dockerfile's `FROM ${BASE_IMAGE}` (default debian:bookworm-slim) resolves without a registry.
#
#   docker/build-base.sh [--force]
#
# Environment (all optional):
#   FM_BASE_TAG      image name to create          (default localhost/debian:bookworm-slim)
#   FM_DEBIAN_SUITE  Debian suite                   (default bookworm)
#   FM_DEBIAN_MIRROR Debian mirror                  (default http://deb.debian.org/debian)
#   FM_DOCKER_CACHE  where the rootfs tarball lives (default ~/.cache/fullmonte-docker)
#   FM_ENGINE        podman or docker               (default podman)
#
# The tarball is cached: a rerun only re-imports it (seconds); --force bootstraps anew. The
# image is minbase with apt, slimmed like Docker's debian:*-slim (no docs, man pages or
# locales; apt lists cleaned), and its apt sources point at the mirror, so `apt-get update`
# works inside a build. Needs root (debootstrap, device nodes in the tarball).
set -euo pipefail
tag=${FM_BASE_TAG:-localhost/debian:bookworm-slim}
suite=${FM_DEBIAN_SUITE:-bookworm}
mirror=${FM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${FM_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fullmonte-docker}
engine=${FM_ENGINE:-podman}
tarball=$cache/debian-$suite-minbase.tar
force=0
[ "${1:-}" = --force ] && force=1

log() { echo "build-base: $*"; }
if [ "$(id -u)" != 0 ]; then echo "build-base: needs root (debootstrap)" >&2; exit 1; fi
command -v "$engine" >/dev/null || { echo "build-base: $engine not found" >&2; exit 1; }

if [ "$force" = 1 ] || [ ! -s "$tarball" ]; then
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
  mkdir -p "$cache"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs"' EXIT
  log "debootstrap --variant=minbase $suite from $mirror (a few minutes)"
  start=$SECONDS
  debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
    tail -30 "$cache/debootstrap.log" >&2; exit 1; }

  # Slim, as Docker's debian:*-slim: keep copyright files, drop docs, man pages and locales,
  # now and for every package installed later.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
  rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda}/* 2>/dev/null || true
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} + 2>/dev/null || true
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'APT::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  # Sources: the suite, its updates and security, from the mirror this was made from.
  rm -f "$rootfs/etc/apt/sources.list"
  secmirror=${FM_DEBIAN_SECURITY_MIRROR:-${mirror%/debian}/debian-security}
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $secmirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin \
         "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/* "$rootfs"/tmp/* "$rootfs"/root/.bash_history
  : >"$rootfs/etc/machine-id"
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) debootstrap --variant=minbase $suite $mirror" >"$rootfs/etc/fullmonte-base"

  tar --numeric-owner --xattrs -C "$rootfs" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  rm -rf "$rootfs"; trap - EXIT
  log "rootfs tarball $tarball ($(du -h "$tarball" | cut -f1)) in $((SECONDS - start)) s"
else
  log "using cached $tarball (--force to bootstrap anew)"
fi

# Import, unless the image is there already from this very tarball (its label says which): a new
# import would be a new image and cost every image built on it its layer cache.
sum=$(sha256sum "$tarball" | cut -c1-64)
label=org.fullmonte.base.sha256
have=$("$engine" image inspect --format "{{index .Labels \"$label\"}}" "$tag" 2>/dev/null || true)
if [ "$force" = 0 ] && [ "$have" = "$sum" ]; then
  log "$tag is up to date"
  exit 0
fi
quiet=()
[ "$engine" = podman ] && quiet=(-q)   # (docker import has no -q)
"$engine" import "${quiet[@]}" \
  --change 'CMD ["bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL $label=$sum" \
  "$tarball" "$tag" >/dev/null
log "imported $tag"
