#!/usr/bin/env bash
# Build the service image from ./Dockerfile with whatever builder this machine has:
# buildah (daemonless, `--isolation chroot`), else podman, else docker. The base is the official
# `debian:bookworm-slim` where a registry answers; otherwise (buildah only) a local stand-in
# made by deploy/base-standin.sh with debootstrap from Debian's mirror. Layers are cached, so a
# rebuild after a source change only redoes the project layer.
#
#   deploy/build-image.sh                 IMAGE (localhost/docservice:latest), BASE_IMAGE
set -euo pipefail
cd "$(dirname "$0")/.."

image="${IMAGE:-localhost/docservice:latest}"
official="docker.io/library/debian:bookworm-slim"
standin="localhost/debian:bookworm-slim"

if command -v buildah >/dev/null; then tool=buildah
elif command -v podman >/dev/null; then tool=podman
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then tool=docker
else
    echo "no image builder: install buildah (apt-get install buildah debootstrap) or podman," >&2
    echo "or run a Docker engine" >&2
    exit 1
fi

base="${BASE_IMAGE:-}"
if [ -z "$base" ]; then
    if [ "$tool" = docker ]; then
        base="debian:bookworm-slim"          # the engine pulls it (or has it)
    elif $tool image exists "$official" 2>/dev/null \
         || $tool inspect --type image "$official" >/dev/null 2>&1 \
         || timeout 120 $tool pull -q "$official" >/dev/null 2>&1; then
        base="$official"
    elif [ "$tool" = buildah ]; then
        echo "registry unreachable: using the local debootstrap stand-in $standin"
        deploy/base-standin.sh "$standin"
        base="$standin"
    else
        echo "cannot pull $official; set BASE_IMAGE or use buildah for the stand-in" >&2
        exit 1
    fi
fi

# The host's CA bundle as the build secret `pip_ca` (see Dockerfile): pip inside the build
# trusts what the host trusts, e.g. a TLS-inspecting egress proxy's CA. Never in a layer.
ca="${PIP_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
secret=()
[ -s "$ca" ] && secret=(--secret "id=pip_ca,src=$ca")

echo "building $image from $base with $tool"
SECONDS=0
case "$tool" in
    buildah)
        buildah bud --isolation chroot --layers --force-rm --format docker --pull=false \
            "${secret[@]}" --build-arg BASE_IMAGE="$base" -t "$image" -f Dockerfile . ;;
    podman)
        podman build --layers --force-rm --format docker --pull=never \
            "${secret[@]}" --build-arg BASE_IMAGE="$base" -t "$image" -f Dockerfile . ;;
    docker)
        DOCKER_BUILDKIT=1 docker build "${secret[@]}" --build-arg BASE_IMAGE="$base" -t "$image" -f Dockerfile . ;;
esac
elapsed=$SECONDS
if [ "$tool" = docker ]; then
    size=$(docker image inspect --format '{{.Size}}' "$image")
else
    size=$($tool inspect --type image --format '{{.Size}}' "$image" 2>/dev/null \
           || $tool images --format '{{.Size}}' "$image")
fi
echo "image $image built in ${elapsed} s; size $size"
