# vmcust .rpm %preun ($1 = 0 removal, 1 upgrade).
if [ "$1" -eq 0 ]; then
    systemctl --no-reload disable vmcust-early.service vmcust-late.service vmcust-imc.path >/dev/null 2>&1 || :
    /usr/bin/vmcust cloud-init-link remove || :
fi
