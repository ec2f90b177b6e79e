#!/usr/bin/env bash
# Make a local stand-in for the official `debian:bookworm-slim` image when no image registry
# can be reached: debootstrap a minbase bookworm from Debian's mirror, trim it the way the
# official slim image is trimmed (no docs, man pages, locales or apt lists; the same dpkg and
# apt settings), and commit it with buildah as $STANDIN_TAG. Cached: an existing image of that
# name is reused, so only the first build pays the ~1 min debootstrap.
#
#   deploy/base-standin.sh [TAG]         (root; needs buildah and debootstrap)
set -euo pipefail

tag="${1:-${STANDIN_TAG:-localhost/debian:bookworm-slim}}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if buildah inspect --type image "$tag" >/dev/null 2>&1; then
    echo "base stand-in $tag: cached"
    exit 0
fi
command -v debootstrap >/dev/null || {
    echo "debootstrap missing: apt-get install debootstrap" >&2; exit 1; }

work=$(mktemp -d /var/tmp/debian-standin.XXXXXX)
ctr=""
cleanup() {
    [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

root="$work/rootfs"
echo "base stand-in $tag: debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2; exit 1; }

# The official image's dpkg and apt settings (docker-debian-artifacts: slim variant).
cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
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
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
cat >"$root/etc/apt/apt.conf.d/docker-no-languages" <<'EOF'
Acquire::Languages "none";
EOF
cat >"$root/etc/apt/apt.conf.d/docker-gzip-indexes" <<'EOF'
Acquire::GzipIndexes "true";
EOF
cat >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests" <<'EOF'
Apt::AutoRemove::SuggestsImportant "false";
EOF
# No init script may start a daemon while packages are installed in a build.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$root"/usr/share/{man,info,groff,lintian,linda}/* \
       "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
       "$root"/var/log/* "$root"/tmp/* "$root"/root/.cache
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
# debootstrap's mknod'ed /dev entries: a runtime provides /dev.
rm -rf "${root:?}/dev"/*
: >"$root/etc/hostname"
: >"$root/etc/resolv.conf"

ctr=$(buildah from scratch)
mnt=$(buildah mount "$ctr")
tar -C "$root" -cf - . | tar -C "$mnt" -xpf - --numeric-owner
buildah umount "$ctr" >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd bash --os linux --arch "$(dpkg --print-architecture)" \
    --label org.opencontainers.image.description="local stand-in for debian:bookworm-slim (debootstrap minbase)" \
    "$ctr"
buildah commit --quiet --rm "$ctr" "$tag" >/dev/null
ctr=""
echo "base stand-in $tag: built, $(buildah images --format '{{.Size}}' "$tag")"
