#!/usr/bin/env bash
# Build anonbox's image without an image registry, with Debian's podman, buildah and
# debootstrap, and run it. docs/deployment.md says why each step is as it is, what it
# was measured to take, and what cannot run on a machine like the one it was written on.
#
#   deploy/build-image.sh [build]       the base image (from Debian's packages), then the app image
#   deploy/build-image.sh base          only the base image
#   deploy/build-image.sh run [ARGS]    `anonbox serve ARGS` from the app image, in the foreground,
#                                       on the host's network (ANONBOX_* from the environment)
#   deploy/build-image.sh exec CMD...   any command in a throw-away container of the app image
#
# Settings (environment):
#   ANONBOX_IMAGE        the app image's name                      (anonbox:latest)
#   ANONBOX_IMAGE_CACHE  the debootstrapped base, as a tarball     (.cache/image in the checkout; git-ignored)
#   ANONBOX_BUILD_CA     CA bundle for pip in the build stage only (/etc/ssl/certs/ca-certificates.crt)
#   ANONBOX_DEBIAN_MIRROR                                          (http://deb.debian.org/debian)
#   ANONBOX_IMAGE_DATA   run/exec: a host directory mounted on /var/lib/anonbox, the image's
#                        working directory, where the SQLite default lands (the volume
#                        compose would give it); owned by uid 10001, the image's user
#   REBUILD_BASE=1       debootstrap again even if the base image or its tarball exists
#
# Root is needed (debootstrap, chroot isolation). Missing tools are installed with apt-get.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
image=${ANONBOX_IMAGE:-anonbox:latest}
build_cache=localhost/anonbox-build-stage:cache
cache=${ANONBOX_IMAGE_CACHE:-$repo/.cache/image}
mirror=${ANONBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
build_ca=${ANONBOX_BUILD_CA:-/etc/ssl/certs/ca-certificates.crt}
# vfs: no overlay filesystem or fuse-overlayfs is needed (nested in a container, neither works).
podman=(podman --storage-driver vfs)
buildah=(buildah --storage-driver vfs)

say() { printf 'build-image: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# The base image is whatever the Dockerfile's FROM lines name (one name, both stages).
base=$(awk 'toupper($1) == "FROM" { print $2 }' "$repo/Dockerfile" | sort -u)
[ "$(printf '%s\n' "$base" | wc -l)" = 1 ] || die "the Dockerfile's FROM lines name more than one base: $base"
case $base in
    debian:*-slim) suite=${base#debian:}; suite=${suite%-slim} ;;
    *) die "the Dockerfile's FROM is $base; this script builds debian:<suite>-slim only" ;;
esac
# Podman's fully qualified form of a Docker Hub short name: FROM finds it there.
base_ref=docker.io/library/$base

need_tools() {
    local missing=()
    command -v podman >/dev/null || missing+=(podman)
    command -v buildah >/dev/null || missing+=(buildah)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    [ ${#missing[@]} = 0 ] && return 0
    [ "$(id -u)" = 0 ] || die "missing ${missing[*]} (apt-get install them as root)"
    say "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# debian:<suite>-slim as Docker's official image is made (debuerreotype): a minbase
# debootstrap, Debian's sources in deb822 form with the security suite, no documentation,
# manual pages or translations installed later, apt's lists and caches emptied.
debootstrap_base() {
    local tarball=$1 root
    root=$(mktemp -d "$cache/rootfs.XXXXXX")
    chmod 0755 "$root"  # mktemp's 0700 would become the image's /: only root could run in it
    say "debootstrap --variant=minbase $suite from $mirror"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
        || die "debootstrap failed: see $cache/debootstrap.log"
    rm -f "$root/etc/apt/sources.list"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
    cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
    echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
    echo 'APT::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/*.log \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/tmp/*
    : >"$root/etc/machine-id"
    tar --numeric-owner --xattrs -C "$root" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$root"
}

build_base() {
    if [ "${REBUILD_BASE:-}" != 1 ] && "${podman[@]}" image exists "$base_ref"; then
        say "base image $base_ref is in podman's store (REBUILD_BASE=1 makes it again)"
        return 0
    fi
    mkdir -p "$cache"
    local tarball=$cache/$suite-slim-rootfs.tar
    if [ "${REBUILD_BASE:-}" = 1 ] || [ ! -s "$tarball" ]; then
        debootstrap_base "$tarball"
    else
        say "base rootfs from the cache: $tarball"
    fi
    "${podman[@]}" import --change 'CMD ["bash"]' "$tarball" "$base_ref" >/dev/null
    say "imported $base_ref"
}

build_app() {
    local ca_args=()
    # The build stage's pip reaches PyPI over TLS and trusts the bundle PIP_CERT names
    # (Dockerfile: ARG PIP_CERT). Behind a TLS-inspecting proxy that is the host's bundle,
    # mounted for the RUN steps only: it is in no layer of either stage.
    if [ -s "$build_ca" ]; then
        ca_args=(--volume "$build_ca:/run/anonbox-build-ca.pem:ro"
            --build-arg PIP_CERT=/run/anonbox-build-ca.pem)
    fi
    local build=("${podman[@]}" build --isolation chroot --network host --pull=never
        --format docker "${ca_args[@]}" -f "$repo/Dockerfile")
    # The build stage gets a name of its own, so that pruning below keeps its layers, the
    # cache of the next build (apt, pip).
    say "podman build --target build -t $build_cache (chroot isolation, vfs storage, host network)"
    "${build[@]}" --target build -t "$build_cache" "$repo"
    say "podman build -t $image"
    "${build[@]}" -t "$image" "$repo"
    # vfs keeps every layer as a whole copy (the runtime image's ≈ 540 MB, several times):
    # the untagged images that earlier builds left behind go, or the disk fills.
    "${podman[@]}" image prune --force >/dev/null
}

# A container of the app image run by buildah with chroot isolation on the host's network
# (podman run stops at crun's setrlimit here: docs/deployment.md). buildah run takes the
# image's user, working directory and environment; ANONBOX_* and PGPASSWORD come from ours.
in_container() {
    local ctr env_args=() volume_args=() name
    if [ -n "${ANONBOX_IMAGE_DATA:-}" ]; then
        [ -d "$ANONBOX_IMAGE_DATA" ] || die "ANONBOX_IMAGE_DATA: no directory $ANONBOX_IMAGE_DATA"
        volume_args=(--volume "$(cd "$ANONBOX_IMAGE_DATA" && pwd):/var/lib/anonbox")
    fi
    ctr=$("${buildah[@]}" from --pull-never --quiet "$image")
    # shellcheck disable=SC2064  # the name is fixed now
    trap "'${buildah[0]}' --storage-driver vfs rm '$ctr' >/dev/null 2>&1 || true" EXIT
    while IFS= read -r name; do
        env_args+=(--env "$name=${!name}")
    done < <(compgen -e | grep -E '^(ANONBOX_|PGPASSWORD$)' | grep -v -E '^ANONBOX_(IMAGE|IMAGE_CACHE|IMAGE_DATA|BUILD_CA|DEBIAN_MIRROR)$' || true)
    # Not exec: the trap removes the container when the command ends or is stopped.
    "${buildah[@]}" run --isolation chroot --network host "${env_args[@]}" "${volume_args[@]}" "$ctr" -- "$@" &
    local child=$!
    trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT
    wait "$child" || { local rc=$?; wait "$child" 2>/dev/null; exit $rc; }
}

[ "$(id -u)" = 0 ] || die "run as root (debootstrap and chroot isolation need it)"
command=${1:-build}
[ $# -gt 0 ] && shift
case $command in
    base) need_tools; build_base ;;
    build) need_tools; build_base; build_app ;;
    run) need_tools; in_container anonbox serve "$@" ;;
    exec) need_tools; in_container "$@" ;;
    *) die "unknown command $command (build, base, run, exec)" ;;
esac
