# vmcust .rpm %post ($1 = 1 install, 2 upgrade); docs/packaging.md.
/usr/bin/vmcust cloud-init-link sync || :
if [ "$1" -eq 1 ]; then
    /usr/bin/vmcust clean --record-only >/dev/null || :
    systemctl --no-reload preset vmcust-early.service vmcust-late.service vmcust-imc.path >/dev/null 2>&1 || :
fi
[ -d /run/systemd/system ] && systemctl daemon-reload >/dev/null 2>&1 || :
