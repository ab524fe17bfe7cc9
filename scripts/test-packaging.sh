#!/usr/bin/env bash
# The whole packaging check, as a release or CI would run it (root): portable build,
# static-binary check, packages of two versions, the .deb in a Debian chroot (install, upgrade,
# trigger, remove, purge) and the .rpm's contents and scriptlets. About 5 minutes on 2
# cores plus the first-time tool installs. docs/packaging.md.
#   scripts/test-packaging.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=yes
[ "${1:-}" = --no-build ] && build=no
out=target/pkg/test
rm -rf "$out"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
next="$version+upgrade1"
if [ "$build" = yes ]; then
    scripts/build-portable.sh
fi
cargo test --quiet --test portable --test install_portable -- --include-ignored
scripts/package.sh --no-build --out "$out"
scripts/package.sh --no-build --out "$out/next" --version "$next"
scripts/test-rpm.sh "$out"/vmcust-"$version"-1.x86_64.rpm
scripts/test-deb-chroot.sh "$out"/vmcust_"$version"-1_amd64.deb "$out/next/vmcust_${next}_amd64.deb"
