#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60) and fails on a crash, a timeout
# (one input over 10 s) or memory over 2 GiB. Corpora are seeded from the repository's own
# test inputs first (fuzz/corpus is not committed). Prints each target's executions.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# With FUZZ_RUNS=N a target stops after N executions (SECONDS stays the ceiling), which is
# how docs/testing.md's "1 M executions each" is reproduced.
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(cust_cfg ovf_env iso guestinfo netconfig glob settings tools_conf cloud_config userdata_parts config_drive seed_media accounts)
fi
# Seeds: the repository's own test inputs (never anything outside the repository).
imc_inputs=imc/tests/data
ovf_inputs=ovf/tests/data

seed() {
    local target=$1
    shift
    mkdir -p "fuzz/corpus/$target"
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "fuzz/corpus/$target/seed-$(basename "$f")"
    done
    return 0
}

seed cust_cfg examples/specs/*.cfg "$imc_inputs"/*.cfg
seed ovf_env "$ovf_inputs"/*.xml
seed settings scripts/vmcust.conf.example
seed tools_conf scripts/vmcust.conf.example
seed cloud_config tests/data/cloud-config/*
seed userdata_parts tests/data/cloud-config/*
mkdir -p fuzz/corpus/accounts
for d in tests/golden/accounts/*/; do
    cp "$d/cloud-config.yaml" "fuzz/corpus/accounts/seed-$(basename "$d").yaml"
done
printf '[deployPkg]\nenable-custom-scripts = true\n' > fuzz/corpus/tools_conf/seed-tools.conf
printf '{"instance-id": "i-1", "local-hostname": "h", "network": {"version": 2, "ethernets": {"n": {"match": {"macaddress": "00:50:56:00:00:01"}, "addresses": ["10.0.0.2/24"]}}}}' \
    > "$(mkdir -p fuzz/corpus/netconfig && echo fuzz/corpus/netconfig/seed-v2.json)"
printf 'version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: "00:50:56:00:00:01"\n    subnets:\n      - type: static\n        address: 10.0.0.2/24\n        gateway: 10.0.0.1\n' \
    > fuzz/corpus/netconfig/seed-v1.yaml
# guestinfo: the first byte picks the encoding (0 plain, 1 base64, 3 gzip+base64).
mkdir -p fuzz/corpus/guestinfo
for f in fuzz/corpus/netconfig/*; do
    { printf '\000'; cat "$f"; } > "fuzz/corpus/guestinfo/plain-$(basename "$f")"
    { printf '\001'; base64 -w0 < "$f"; } > "fuzz/corpus/guestinfo/b64-$(basename "$f")"
    { printf '\003'; gzip -c < "$f" | base64 -w0; } > "fuzz/corpus/guestinfo/gz-$(basename "$f")"
done
# iso: small images holding the OVF examples, when an image tool is installed.
mkdir -p fuzz/corpus/iso
if command -v genisoimage >/dev/null; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for f in "$ovf_inputs"/all-properties-example.xml "$ovf_inputs"/b64-userdata.xml; do
        [ -f "$f" ] || continue
        mkdir -p "$tmp/d" && cp "$f" "$tmp/d/ovf-env.xml"
        genisoimage -quiet -V OVF_ENV -r -J -o "fuzz/corpus/iso/seed-$(basename "$f").iso" "$tmp/d"
        genisoimage -quiet -V OVF_ENV -o "fuzz/corpus/iso/seed-plain-$(basename "$f").iso" "$tmp/d"
        rm -rf "$tmp/d"
    done
fi

# The fuzz crate is its own workspace; start its lock file from the project's, so the
# fuzzed code is built with the versions the project tests (it is not committed).
[ -f fuzz/Cargo.lock ] || cp Cargo.lock fuzz/Cargo.lock
cd fuzz
cargo +nightly fuzz build -O
runs_flag=()
[ -n "${FUZZ_RUNS:-}" ] && runs_flag=(-runs="$FUZZ_RUNS")
status=0
for target in "${targets[@]}"; do
    log=$(mktemp)
    if cargo +nightly fuzz run -O "$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
        -print_final_stats=1 "${runs_flag[@]}" >"$log" 2>&1; then
        runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
        took=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -Eo '[0-9]+ second' || echo "${seconds} second")
        echo "$target: ok, $runs executions in ${took}s"
    else
        echo "$target: FAILED (crash, timeout or memory); log follows"
        tail -40 "$log"
        status=1
    fi
    rm -f "$log"
done
exit $status
