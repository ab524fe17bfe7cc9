#!/usr/bin/env bash
# The README's test command: installs what the tests need (Debian packages from
# scripts/test-packages.txt with apt-get, crates through cargo) and runs every test:
# format and lint checks, the workspace's unit and integration tests, every fuzz target for
# 60 s, the packaging checks (scripts/test-packaging.sh) and the real-boot VM scenarios
# that CI runs (tests/vm/). Needs root (network namespaces, chroots, mounts) and the
# nightly toolchain for cargo-fuzz.
#   scripts/test.sh            everything
#   scripts/test.sh --no-vm    everything but the VM scenarios (they take ~20 minutes)
#   scripts/test.sh --quick    a few minutes, any user, installs nothing: build every
#                              target and run the unit tests of each crate
set -euo pipefail
cd "$(dirname "$0")/.."

vm=1
quick=0
for arg in "$@"; do
    case "$arg" in
        --no-vm) vm=0 ;;
        --quick) quick=1 ;;
        *) echo "usage: scripts/test.sh [--no-vm | --quick]" >&2; exit 64 ;;
    esac
done

if [ "$quick" = 1 ]; then
    # The check that it builds and works, without root, packages or VMs. A unit test
    # that needs a Debian tool (ssh-keygen, groff, python3-gi) names its package when the
    # tool is missing.
    echo "== build: every crate and every test target"
    cargo build --workspace --all-targets
    echo "== unit tests of every crate"
    cargo test --workspace --lib --bins
    echo "== quick check passed; scripts/test.sh (as root) runs everything"
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "scripts/test.sh: run as root: the tests use network namespaces, mounts and chroots" >&2
    exit 77
fi

echo "== installing the Debian packages the tests use (scripts/test-packages.txt)"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
# shellcheck disable=SC2046 # one package name per word
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $(grep -v '^#' scripts/test-packages.txt) >/dev/null

echo "== format and lint"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

echo "== unit and integration tests"
cargo test --workspace

echo "== fuzzing: every target 60 s (fails on a crash, a timeout or memory over the bound)"
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
scripts/fuzz.sh 60

echo "== packages: portable (static) build, .rpm checks, .deb install/upgrade/remove in a chroot"
scripts/test-packaging.sh

if [ "$vm" = 1 ] && [ -x tests/vm/run.sh ]; then
    echo "== real-boot VM scenarios (CI subset; the full matrix: tests/vm/run.sh --all)"
    # The binary the packaging step just built and checked, as the packages ship it.
    VMCUST_VM_BINARY=target/pkg/vmcust tests/vm/run.sh --ci
    echo "== cloud-config parity: 96 documents (46 of the project's, 50 of cloud-init's own examples), Debian's cloud-init 22.4 against vmcust"
    VMCUST_VM_BINARY=target/pkg/vmcust tests/vm/cloud-config-parity.sh
fi
