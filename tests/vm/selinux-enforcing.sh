#!/usr/bin/env bash
# SELinux enforcing on a real boot (docs/selinux.md): a Debian 12 root from tests/vm's
# base tarball gets Debian's SELinux policy (selinux-policy-default, selinux-basics,
# openssh-server), is labelled by the policy's own setfiles, and boots under QEMU with
# `security=selinux enforcing=1`. In the guest, vmcust applies an OVF environment (root
# password, an SSH key, host name) to `/` (with no /root/.ssh, so vmcust creates it);
# then root must log in over SSH with the key and, separately, with the new password.
# With a vmcust that does not label what it writes, the key login fails.
#
# usage: sudo tests/vm/selinux-enforcing.sh BASE_TARBALL VMCUST_BINARY [WORKDIR]
#   BASE_TARBALL   an mmdebstrap tarball of tests/vm/run.sh (target/vm-cache/base-networkd-*.tar)
#   VMCUST_BINARY  the vmcust to test (a dynamic build works: the guest is Debian 12)
#   WORKDIR        scratch directory (default: a new one under /tmp), kept for the logs
# Needs root, network for apt in the chroot, qemu-system-x86 and e2fsprogs. One boot
# under TCG takes 3-5 minutes. Not part of run.sh: its images have no SELinux policy.
set -euo pipefail

[ $# -ge 2 ] || { sed -n '10,16p' "$0"; exit 2; }
tarball=$1 binary=$2
work=${3:-$(mktemp -d /tmp/vmcust-selinux-vm.XXXXXX)}
root=$work/root
fc=/etc/selinux/default/contexts/files/file_contexts
password=Se-Test-2026

rm -rf "$root" && mkdir -p "$root"
tar -xf "$tarball" -C "$root" --numeric-owner
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() {
    local rc=0
    mount --bind /proc "$root/proc"
    chroot "$root" "$@" || rc=$?
    umount "$root/proc"
    return $rc
}
in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends selinux-policy-default selinux-basics openssh-server auditd' >"$work/apt.log"
sed -i 's/^SELINUX=.*/SELINUX=enforcing/' "$root/etc/selinux/config"
printf 'LABEL=vmroot / ext4 defaults 0 1\n' >"$root/etc/fstab"
echo template >"$root/etc/hostname"
rmdir "$root/root/.ssh" 2>/dev/null || true
printf 'PermitRootLogin yes\nPasswordAuthentication yes\n' >"$root/etc/ssh/sshd_config.d/10-test.conf"

ssh-keygen -q -t ed25519 -N "" -C selinux-test -f "$work/client" <<<y >/dev/null
install -m 0755 "$binary" "$root/usr/local/bin/vmcust"
install -m 0600 "$work/client" "$root/usr/local/share/client_key"
cat >"$root/usr/local/share/ovf-env.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
    xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" oe:id="">
  <PropertySection>
    <Property oe:key="instance-id" oe:value="selinux-vm-1"/>
    <Property oe:key="hostname" oe:value="se-guest"/>
    <Property oe:key="password" oe:value="$password"/>
    <Property oe:key="public-keys" oe:value="$(cat "$work/client.pub")"/>
  </PropertySection>
</Environment>
EOF

# The guest side: apply, show labels, log in with the key and with the password.
cat >"$root/usr/local/sbin/seprobe" <<'EOF'
#!/bin/sh
# To a file the host reads from the disk afterwards: the serial getty's vhangup() would
# cut off anything still writing to ttyS0.
exec >/var/log/seprobe.log 2>&1
p() { sed 's/^/SEPROBE: /'; }
echo "getenforce=$(getenforce) probe-domain=$(id -Z)" | p
/usr/local/bin/vmcust apply --root / --ovf /usr/local/share/ovf-env.xml 2>&1 | grep -v '^    |' | p
ls -Zd /etc/shadow /etc/hosts /etc/hostname /root/.ssh /root/.ssh/authorized_keys | sed 's/^/LABEL /' | p
systemctl restart ssh; sleep 2
o="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
timeout 60 ssh -i /usr/local/share/client_key -o BatchMode=yes $o -o PreferredAuthentications=publickey \
    root@127.0.0.1 'echo KEY-LOGIN-OK as $(id -un)' 2>&1 | p
PASSWORD=__PASSWORD__ timeout 60 python3 - <<'PY' 2>&1 | p
import os, pty, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execvp("ssh", ["ssh", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
        "-o", "PreferredAuthentications=password", "-o", "PubkeyAuthentication=no",
        "root@127.0.0.1", "echo PASSWORD-LOGIN-OK as $(id -un)"])
out, sent, end = b"", False, time.time() + 50
while time.time() < end:
    if not select.select([fd], [], [], 1)[0]:
        continue
    try:
        d = os.read(fd, 1024)
    except OSError:
        break
    if not d:
        break
    out += d
    if not sent and b"assword:" in out:
        os.write(fd, os.environ["PASSWORD"].encode() + b"\n")
        sent = True
print(out.decode(errors="replace").replace("\r", ""))
PY
journalctl -b --no-pager | grep 'avc:  denied' | grep -E 'sshd|ssh_home|shadow' | head -5 | p
echo SEPROBE-DONE
systemctl poweroff
EOF
sed -i "s/__PASSWORD__/$password/" "$root/usr/local/sbin/seprobe"
chmod 0755 "$root/usr/local/sbin/seprobe"
cat >"$root/etc/systemd/system/seprobe.service" <<'EOF'
[Unit]
Description=vmcust SELinux probe
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/seprobe
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/seprobe.service "$root/etc/systemd/system/multi-user.target.wants/seprobe.service"

# Label the whole root with the policy's own tool, then the ext4 disk keeps the labels.
in_root setfiles -F -m "$fc" / >"$work/setfiles.log" 2>&1
cp -L "$root"/boot/vmlinuz-* "$work/vmlinuz"
cp -L "$root"/boot/initrd.img-* "$work/initrd"
mkfs.ext4 -q -F -L vmroot -d "$root" "$work/disk.raw" 3G
rm -f "$work/console.log"
timeout 900 qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
    -kernel "$work/vmlinuz" -initrd "$work/initrd" -drive "file=$work/disk.raw,format=raw,if=virtio" \
    -append "root=LABEL=vmroot rw console=ttyS0,115200 security=selinux selinux=1 enforcing=1" \
    -serial "file:$work/console.log" -monitor none -display none -net none >"$work/qemu.out" 2>&1 || true

debugfs -R "cat /var/log/seprobe.log" "$work/disk.raw" >"$work/seprobe.log" 2>/dev/null || true
cat "$work/seprobe.log"
fail=0
check() { if grep -q -- "$2" "$work/seprobe.log"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }
check "the guest ran enforcing" "getenforce=Enforcing"
check "the probe finished" "SEPROBE-DONE"
check "/etc/shadow is shadow_t" "LABEL .*:shadow_t:.* /etc/shadow"
check "/root/.ssh (created) is ssh_home_t" "LABEL .*:ssh_home_t:[^ ]* /root/\.ssh[[:space:]]*$"
check "authorized_keys is ssh_home_t" "LABEL .*:ssh_home_t:.* /root/.ssh/authorized_keys"
check "root logs in with the key" "KEY-LOGIN-OK as root"
check "root logs in with the new password" "PASSWORD-LOGIN-OK as root"
echo "logs in $work"
exit $fail
