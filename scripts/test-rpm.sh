#!/usr/bin/env bash
# Checks the vmcust .rpm without installing it: the file list (rpm -qlp), the config file,
# the requirements, and the scriptlets (rpm -qp --scripts): each passes `sh -n`, syncs the
# cloud-init stand-in on every install, records the template and presets the units on the
# first install only, and disables and removes only on erase. Ends with
# "N passed, N failed".
#   scripts/test-rpm.sh PACKAGE.rpm
set -euo pipefail
rpmfile=${1:?usage: test-rpm.sh PACKAGE.rpm}
command -v rpm >/dev/null || { echo "test-rpm.sh: rpm missing; apt-get install rpm" >&2; exit 1; }
[ -f "$rpmfile" ] || { echo "test-rpm.sh: no $rpmfile; build it with scripts/package.sh" >&2; exit 1; }

pass=0
fail=0
check() {
    local name=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
        echo "ok   $name"
    else
        fail=$((fail + 1))
        echo "FAIL $name"
    fi
}
files=$(rpm -qlp "$rpmfile" 2>/dev/null)
has() { grep -qx "$1" <<<"$files"; }
for f in /usr/bin/vmcust \
    /usr/lib/systemd/system/vmcust-early.service \
    /usr/lib/systemd/system/vmcust-late.service \
    /usr/lib/systemd/system-preset/80-vmcust.preset \
    /usr/share/vmcust/99-vmcust.cfg \
    /etc/vmcust/vmcust.conf \
    /usr/share/man/man1/vmcust.1 \
    /usr/share/man/man1/vmcust-clean.1 \
    /usr/share/man/man5/vmcust.conf.5 \
    /usr/share/man/man8/vmcust-cloud-init.8 \
    /usr/share/bash-completion/completions/vmcust \
    /usr/share/zsh/site-functions/_vmcust \
    /usr/share/fish/vendor_completions.d/vmcust.fish \
    /usr/share/doc/vmcust/README.md \
    /usr/share/doc/vmcust/packaging.md; do
    check "contains $f" has "$f"
done
check "no cloud-init link shipped (made only without a real cloud-init)" bash -c "! grep -q '^/usr/bin/cloud-init$' <<<'$files'"
check "no drop-in shipped in /etc/cloud" bash -c "! grep -q '^/etc/cloud' <<<'$files'"
check "settings are a noreplace config file" bash -c "rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' '$rpmfile' 2>/dev/null | grep -q '^/etc/vmcust/vmcust.conf cn'"
check "binary mode 0755" bash -c "rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms}\n]' '$rpmfile' 2>/dev/null | grep -qx '/usr/bin/vmcust -rwxr-xr-x'"
check "requires no C library (the binary is static)" bash -c "! rpm -qpR '$rpmfile' 2>/dev/null | grep -Eq '^(glibc|libc\\.so)'"

scripts=$(rpm -qp --scripts "$rpmfile" 2>/dev/null)
# One scriptlet's body: from its "NAME scriptlet" header to the next header.
body() { awk -v want="$1" '/^[a-z]+ scriptlet( \(using [^)]*\))?:$/ { on = ($1 == want); next } on' <<<"$scripts"; }
post=$(body postinstall)
preun=$(body preuninstall)
postun=$(body postuninstall)
for s in post preun postun; do
    check "$s scriptlet present and valid sh" bash -c "[ -n \"\$1\" ] && sh -n <<<\"\$1\"" _ "${!s}"
done
check "post syncs the stand-in on every install" grep -q '^/usr/bin/vmcust cloud-init-link sync' <<<"$post"
check "post presets and records on first install only" bash -c 'grep -A3 "if \[ \"\$1\" -eq 1 \]" <<<"$1" | grep -q "systemctl --no-reload preset" && grep -A3 "if \[ \"\$1\" -eq 1 \]" <<<"$1" | grep -q "clean --record-only"' _ "$post"
check "preun disables and removes only on erase" bash -c 'grep -A3 "if \[ \"\$1\" -eq 0 \]" <<<"$1" | grep -q "cloud-init-link remove"' _ "$preun"

# Run the scriptlets against stub commands: what each would execute, by argument.
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
mkdir -p "$stub/usr/bin"
for cmd in systemctl vmcust; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$cmd" "$stub" >"$stub/$cmd"
    chmod +x "$stub/$cmd"
done
run_scriptlet() { # run_scriptlet BODY ARG: the calls it makes, /usr/bin/vmcust stubbed
    : >"$stub/calls"
    sed "s|/usr/bin/vmcust|$stub/vmcust|g" <<<"$1" | PATH="$stub:$PATH" sh -s -- "$2" >/dev/null 2>&1 || true
    cat "$stub/calls"
}
check "post on install: sync, record, preset" bash -c 'grep -q "^vmcust cloud-init-link sync" <<<"$1" && grep -q "^vmcust clean --record-only" <<<"$1" && grep -q "^systemctl --no-reload preset vmcust-early.service vmcust-late.service" <<<"$1"' _ "$(run_scriptlet "$post" 1)"
check "post on upgrade: sync, no record, no preset" bash -c 'grep -q "^vmcust cloud-init-link sync" <<<"$1" && ! grep -q "record-only\|preset" <<<"$1"' _ "$(run_scriptlet "$post" 2)"
check "preun on upgrade: nothing" bash -c '[ -z "$1" ]' _ "$(run_scriptlet "$preun" 1)"
check "preun on erase: disable and remove" bash -c 'grep -q "systemctl --no-reload disable" <<<"$1" && grep -q "vmcust cloud-init-link remove" <<<"$1"' _ "$(run_scriptlet "$preun" 0)"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
