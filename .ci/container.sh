#!/usr/bin/env bash
# CI step: build the project's Dockerfile with podman (vfs storage, chroot isolation: no Docker engine and no
# registry base images here), then, inside the built image, run `effmarl env-info` (which must report
# "project image: yes", from the marker the Dockerfile writes), record `pip freeze`, run the smoke workflow,
# and check with tests/test_container.py that the image holds the lock's environment and that the outputs
# exist with provenance saying they came from the container.
# Facts this relies on: docs of the development machine (podman run fails on setrlimit; buildah run works).
# Every step has a timeout; the image store lives in a private directory that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh

WORK=$(mktemp -d /var/tmp/effmarl-container.XXXXXX)
OUT="${EFFMARL_CI_OUT:-$WORK/out}"          # what the checks read: env-info, pip freeze, the smoke results
STORE="--storage-driver vfs --root $WORK/storage --runroot $WORK/runroot"  # mktemp paths: no spaces
IMAGE=localhost/effmarl:ci
BASE=localhost/debian:bookworm-python
CONTAINER=effmarl-ci-$$
mkdir -p "$OUT/results" "$WORK/tmp"
export TMPDIR=$WORK/tmp                     # podman's and buildah's scratch space, removed with the rest
export WORK OUT STORE IMAGE BASE CONTAINER

cleanup() {
  stop_step
  buildah $STORE rm "$CONTAINER" >/dev/null 2>&1 || true
  # vfs copies every layer in full (about 9 GB for this image): never leave the store behind
  rm -rf "$WORK/storage" "$WORK/runroot" "$WORK/rootfs" "$WORK/tmp"
  echo "container: image store removed; outputs kept in $OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "install podman, buildah, debootstrap" 600 ensure_packages podman buildah debootstrap

# The base: Debian bookworm minbase + python3 (3.11) + venv, with the venv first on PATH so the Dockerfile's
# pip lines behave as on the official Python image (Debian's own python3 is externally managed, PEP 668).
make_base() {
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$WORK/rootfs" \
    http://deb.debian.org/debian > "$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log"; return 1; }
  chroot "$WORK/rootfs" /usr/bin/python3 -m venv /opt/venv
  rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*
  tar -C "$WORK/rootfs" -c . | podman $STORE import \
    --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' - "$BASE" > /dev/null
  rm -rf "$WORK/rootfs"
}
export -f make_base
step "debootstrap a Debian base image" 900 make_base

# The torch wheel comes from the local wheel directory (the PyTorch index is not reachable here); the host's
# CA bundle lets pip inside the build reach the package index. Both are mounted at the same paths.
git rev-parse HEAD > "$OUT/git-commit.txt"   # the commit the image is built from, as the checks expect it
BUILD_ARGS=(--build-arg "BASE=$BASE" --build-arg "GIT_COMMIT=$(cat "$OUT/git-commit.txt")"
            --build-arg "TORCH_INDEX=https://pypi.org/simple")
for var in PIP_FIND_LINKS PIP_CERT; do
  if [ -n "${!var:-}" ] && [ -e "${!var}" ]; then
    BUILD_ARGS+=(--build-arg "$var=${!var}" --volume "${!var}:${!var}:ro")
  fi
done
step "build the image (podman, vfs, chroot isolation)" 2400 \
  podman $STORE build --isolation chroot --layers=false "${BUILD_ARGS[@]}" -t "$IMAGE" -f Dockerfile .

# `podman run` fails here (crun cannot set RLIMIT_NOFILE); buildah's chroot isolation runs the image.
step "a working container from the image" 600 buildah $STORE from --pull=never --name "$CONTAINER" "$IMAGE"
in_image() { buildah $STORE run --isolation chroot --workingdir /effmarl "$@"; }
env_info() {
  in_image "$CONTAINER" -- effmarl env-info | tee "$OUT/env-info.txt"
  grep -q '^project image: yes' "$OUT/env-info.txt" || { echo "env-info does not see the project image" >&2; return 1; }
  in_image "$CONTAINER" -- effmarl env-info --json > "$OUT/env-info.json"
  in_image "$CONTAINER" -- pip freeze --all > "$OUT/pip-freeze.txt"
}
smoke() {
  in_image --volume "$OUT/results:/effmarl/results" "$CONTAINER" -- \
    snakemake --cores 2 --configfile configs/smoke.yaml --quiet rules
}
export -f in_image env_info smoke
step "effmarl env-info and pip freeze inside the image" 300 env_info
step "smoke workflow inside the image" 2400 smoke

step "check the image against the lock and the outputs' provenance" 600 \
  env EFFMARL_CONTAINER_OUT="$OUT" python -m pytest -q -p no:cacheprovider tests/test_container.py
