# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A template without cloud-init that serves Terraform/govc users: guestinfo metadata with
# a network matched by name (`match: name: "en*"`, as cloud-init's VMware docs write it)
# and `#cloud-config` user-data creating a sudo user with an SSH key, files, `bootcmd`,
# `runcmd`, and a package from a local apt repository on the test disk (air-gapped: the
# document points apt at it). vmcust applies all of it itself; the user then logs in from the
# host over SSH (QEMU's port forward) with the key and `sudo -n true` works. The second boot runs bootcmd again and
# nothing else.
stack=networkd
variant=sealed
describe="guestinfo #cloud-config without cloud-init: a sudo user with a key logs in over SSH (sudo -n true), files, a package from a local repository, runcmd once, the network matched by name; a second boot runs bootcmd again and nothing else"

scenario_prepare() {
    local g=$scn_dir/disk/host/guestinfo
    rm -f "$scn_dir/disk/host/id_ed25519" "$scn_dir/disk/host/id_ed25519.pub"
    ssh-keygen -q -t ed25519 -N '' -C alice@vmtest -f "$scn_dir/disk/host/id_ed25519"
    chmod 600 "$scn_dir/disk/host/id_ed25519"
    local_repo "$scn_dir/disk/host/repo"
    cat >"$g/guestinfo.metadata" <<'META'
instance-id: cc-native-0001
local-hostname: cc-native
network:
  version: 2
  ethernets:
    lan:
      match:
        name: "en*"
      addresses: [192.168.71.40/24]
      routes:
        - to: default
          via: 192.168.71.1
      nameservers:
        addresses: [192.168.71.2]
META
    {
        printf '#cloud-config\ngroups: [ops]\nusers:\n  - name: alice\n'
        printf '    groups: [ops]\n    sudo: ALL=(ALL) NOPASSWD:ALL\n    shell: /bin/bash\n'
        printf '    ssh_authorized_keys:\n      - %s\n' "$(cat "$scn_dir/disk/host/id_ed25519.pub")"
        cat <<'CC'
bootcmd:
  - [sh, -c, 'echo boot >> /var/lib/vmtest-bootcmd-runs']
  - [sh, -c, 'rm -f /etc/apt/sources.list.d/*.sources; : > /etc/apt/sources.list']
write_files:
  - path: /etc/apt/sources.list.d/vmtest.list
    content: "deb [trusted=yes] file:/vmtest/host/repo ./\n"
  - path: /home/alice/welcome.txt
    content: welcome alice
    owner: alice:alice
    permissions: '0640'
    defer: true
packages: [vmtest-hello]
runcmd:
  - [sh, -c, 'echo run >> /var/lib/vmtest-runcmd-runs']
CC
    } | base64 -w0 >"$g/guestinfo.userdata"
    printf 'base64' >"$g/guestinfo.userdata.encoding"
    # The host logs in as alice through QEMU's forward of a local port to the guest's
    # SSH port (scenario_during_boot); the console, after each boot, waits until it has
    # (its sudo leaves a mark) and notes what the account files are, to compare the boots.
    ssh_port=$(free_port)
    scenario_netdev="net=192.168.71.0/24,host=192.168.71.1,dns=192.168.71.2,hostfwd=tcp:127.0.0.1:$ssh_port-192.168.71.40:22"
    local n
    for n in 1 2; do
        cat >"$scn_dir/disk/host/after-boot-$n" <<EOF
out=/vmtest/results/boot-$n
for _ in \$(seq 100); do [ -e /run/vmtest-host-ssh-done ] && break; sleep 1; done
ls -l /run/vmtest-host-ssh-done >"\$out/host-ssh-mark.txt" 2>&1
sha256sum /etc/passwd /etc/group /etc/shadow /etc/gshadow /etc/sudoers.d/* \\
    /home/alice/.ssh/authorized_keys >"\$out/accounts.sha" 2>&1
cp /var/lib/vmtest-bootcmd-runs /var/lib/vmtest-runcmd-runs "\$out/" 2>&1
stat -c '%a %U:%G' /home/alice/welcome.txt >"\$out/welcome.txt" 2>&1
cat /home/alice/welcome.txt >>"\$out/welcome.txt" 2>&1
dpkg-query -W -f='\${Status} \${Version}\n' vmtest-hello >"\$out/package.txt" 2>&1
EOF
    done
}

# scenario_during_boot N: alice logs in from the host with her key, over the forwarded
# port, and asks sudo (which leaves the mark the console waits for).
scenario_during_boot() {
    ssh_from_host "$ssh_port" "$scn_dir/disk/host/id_ed25519" alice \
        'id -un; id -Gn; sudo -n true && echo sudo-ok; sudo -n touch /run/vmtest-host-ssh-done' \
        >"$scn_dir/host-ssh-$1.txt"
}

# host_ssh N REGEX: what the host's SSH login of boot N printed matches REGEX.
host_ssh() { grep -Eq -- "$2" "$scn_dir/host-ssh-$1.txt"; }

# local_repo DIR: a flat apt repository with one package, vmtest-hello 1.0, built here.
local_repo() {
    local repo=$1 pkg=$scn_dir/vmtest-hello
    rm -rf "$repo" "$pkg"
    mkdir -p "$repo" "$pkg/DEBIAN" "$pkg/usr/share/vmtest-hello"
    printf 'Package: vmtest-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: vmcust tests <tests@vmcust.invalid>\nDescription: installed from the test disk by cloud-config packages\n' \
        >"$pkg/DEBIAN/control"
    echo hello >"$pkg/usr/share/vmtest-hello/hello"
    dpkg-deb -b --root-owner-group "$pkg" "$repo/vmtest-hello_1.0_all.deb" >/dev/null
    local deb=$repo/vmtest-hello_1.0_all.deb
    {
        dpkg-deb -f "$deb"
        echo "Filename: ./vmtest-hello_1.0_all.deb"
        echo "Size: $(stat -c %s "$deb")"
        echo "SHA256: $(sha256sum "$deb" | cut -d' ' -f1)"
        echo
    } >"$repo/Packages"
}

scenario_boots() {
    boot 1
    boot 2
}

scenario_checks() {
    local n
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name from the metadata" has 1 hostname.txt '^cc-native$'
    check "boot 1: $dev (matched by name en*) has exactly 192.168.71.40/24" exact_addresses 1 "$dev" 192.168.71.40/24
    check "boot 1: default route via 192.168.71.1" has 1 ip-route.txt "^default via 192.168.71.1 dev $dev"
    check "boot 1: alice logs in from the host over SSH (hostfwd) with her key" host_ssh 1 '^alice$'
    check "boot 1: alice is in ops" host_ssh 1 '(^| )ops( |$)'
    check "boot 1: sudo -n true works for alice" host_ssh 1 '^sudo-ok$'
    check "boot 1: the console saw the host's login" has 1 host-ssh-mark.txt 'vmtest-host-ssh-done'
    check "boot 1: vmcust status is ok (exit 0, nothing degraded)" has 1 vmcust-status.txt '^exit=0$'
    check "boot 1: sshd accepts its configuration" has 1 sshd-t.txt '^exit=0$'
    check "boot 1: the package came from the local repository" has 1 package.txt '^install ok installed 1.0$'
    check "boot 1: runcmd ran once" test "$(wc -l <"$(r 1 vmtest-runcmd-runs)")" -eq 1
    check "boot 1: bootcmd ran once" test "$(wc -l <"$(r 1 vmtest-bootcmd-runs)")" -eq 1
    check "boot 1: alice's deferred file, 0640 alice:alice" has 1 welcome.txt '^640 alice:alice$'
    check "boot 1: alice's file holds what was written" has 1 welcome.txt '^welcome alice$'
    for n in 2; do
        check "boot $n: both vmcust units succeeded" units_ok "$n"
        check "boot $n: alice still logs in from the host, sudo works" host_ssh "$n" '^sudo-ok$'
    done
    check "boot 2: bootcmd ran again (twice in all)" test "$(wc -l <"$(r 2 vmtest-bootcmd-runs)")" -eq 2
    check "boot 2: runcmd did not run again" test "$(wc -l <"$(r 2 vmtest-runcmd-runs)")" -eq 1
    check "boot 2: the account files are byte for byte those of boot 1" \
        cmp "$(r 1 accounts.sha)" "$(r 2 accounts.sha)"
    check "boot 2: the instance was not customized again" has 2 vmcust-journal.txt 'was customized already|guestinfo is not read this boot'
}
