# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A Packer vsphere-iso build on a template without cloud-init: the NoCloud seed Packer's
# `cd_content` makes (an ISO labelled cidata, `meta-data` as jsonencode writes it,
# `#cloud-config` user-data creating the build user with the temporary key, sudo and
# password login), then what a Packer shell provisioner runs over SSH as soon as it can
# log in, under `/bin/sh -e`: the boot-finished loop of Packer's own docs, then
# `sudo cloud-init status --wait`, whose exit status fails the build unless 0. The host
# logs in while the late stage may still run: the wait must last until the end and say
# done.
stack=networkd
variant=sealed
describe="Packer NoCloud (cidata ISO, JSON meta-data, cloud-config build user): the provisioner logs in over SSH, waits for boot-finished and cloud-init status --wait under sh -e: done, exit 0"

scenario_prepare() {
    local d
    rm -f "$scn_dir/packer_key" "$scn_dir/packer_key.pub"
    ssh-keygen -q -t ed25519 -N '' -C packer@vmtest -f "$scn_dir/packer_key"
    chmod 600 "$scn_dir/packer_key"
    d=$(mktemp -d)
    printf '{"instance-id":"packer-build-0001","local-hostname":"packer-build"}' >"$d/meta-data"
    cat >"$d/user-data" <<EOF
#cloud-config
ssh_pwauth: true
users:
  - name: packer
    plain_text_passwd: packer-build-secret
    lock_passwd: false
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    ssh_authorized_keys:
      - $(cat "$scn_dir/packer_key.pub")
runcmd:
  - [sh, -c, 'sleep 5; echo provisioned > /var/lib/vmtest-runcmd']
EOF
    genisoimage -quiet -o "$scn_dir/ovf.iso" -V cidata -J -R "$d"
    rm -rf "$d"
    ssh_port=$(free_port)
    scenario_netdev="hostfwd=tcp:127.0.0.1:$ssh_port-:22"
    # The console waits for the provisioner's mark before it collects.
    cat >"$scn_dir/disk/host/after-boot-1" <<'EOF'
for _ in $(seq 100); do [ -e /run/vmtest-host-ssh-done ] && break; sleep 1; done
ls /run/vmtest-host-ssh-done >/vmtest/results/boot-1/provisioner-mark.txt 2>&1
EOF
}

# scenario_during_boot N: Packer's shell provisioner, as soon as SSH lets it in.
scenario_during_boot() {
    [ "$1" = 1 ] || return 0
    ssh_from_host "$ssh_port" "$scn_dir/packer_key" packer \
        "sh -e -c 'while [ ! -f /var/lib/cloud/instance/boot-finished ]; do echo Waiting for cloud-init...; sleep 1; done; sudo cloud-init status --wait; echo wait-exit=\$?; cat /var/lib/vmtest-runcmd; sudo touch /run/vmtest-host-ssh-done'" \
        >"$scn_dir/packer-$1.txt"
}

# packer N REGEX: what the provisioner of boot N printed matches REGEX.
packer() { grep -Eq -- "$2" "$scn_dir/packer-$1.txt"; }

scenario_boots() { boot 1; }

scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name from the JSON meta-data" has 1 hostname.txt '^packer-build$'
    check "boot 1: the provisioner logged in over SSH with the build key" packer 1 'ssh exit=0'
    check "boot 1: cloud-init status --wait said done" packer 1 '^status: done$'
    check "boot 1: cloud-init status --wait exited 0 under sh -e" packer 1 '^wait-exit=0$'
    check "boot 1: runcmd had finished when the wait returned" packer 1 '^provisioned$'
    check "boot 1: the console saw the provisioner's mark" has 1 provisioner-mark.txt 'vmtest-host-ssh-done'
    check "boot 1: vmcust status is ok (exit 0)" has 1 vmcust-status.txt '^exit=0$'
}
