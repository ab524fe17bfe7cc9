# vmcust .rpm %postun ($1 = 0 removal, 1 upgrade).
[ -d /run/systemd/system ] && systemctl daemon-reload >/dev/null 2>&1 || :
