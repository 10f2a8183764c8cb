#!/usr/bin/env bash
# Builds a minimal Debian base image with debootstrap and imports it into the engine.
# Used where no registry can be reached to pull the stock Debian image.
#   usage: images/base/build.sh TAG [SUITE] [MIRROR]
# Needs root and debootstrap (Debian: apt-get install debootstrap).
set -euo pipefail
tag="${1:?usage: build.sh TAG [SUITE] [MIRROR]}"
suite="${2:-bookworm}"
mirror="${3:-http://deb.debian.org/debian}"

if [ "$(id -u)" != "0" ]; then
  echo "building the base image needs root (debootstrap); run as root or pass --base IMAGE with an image you have" >&2
  exit 1
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }

root="$(mktemp -d /var/tmp/drydock-base.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "[base] debootstrap $suite from $mirror into $root" >&2
debootstrap --variant=minbase --include=ca-certificates "$suite" "$root" "$mirror" \
  | sed -u 's/^/[base] /' >&2
# Keep the image small and free of host traces.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/* 
printf 'deb %s %s main\ndeb %s %s-updates main\n' "$mirror" "$suite" "$mirror" "$suite" > "$root/etc/apt/sources.list"
echo "[base] importing as $tag" >&2
tar --numeric-owner -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "[base] done: $tag" >&2
