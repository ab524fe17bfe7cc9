# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A Cluster API vSphere worker node on a template without cloud-init: guestinfo as CAPV
# sets it (base64 metadata with quoted values, `wait-on-network`, the NIC matched by MAC
# with `set-name: eth0` and `wakeonlan`, the deprecated `gateway4`), and the kubeadm
# bootstrap provider's user-data: `## template: jinja` then `#cloud-config`, write_files
# in its 4-space style (the join configuration naming the node `{{ local_hostname }}`,
# the placeholder), and runcmd with CAPV's preKubeadmCommands (`hostnamectl` and
# /etc/hosts from `{{ ds.meta_data.hostname }}`), then the join command and its success
# sentinel. `kubeadm` is a stand-in script the document writes, which records its
# arguments and the config it was given. What the node must show: the rendered names, the
# NIC renamed, the sentinel, `boot-finished`, `cloud-init status --wait` done (exit 0),
# and instance data; a second boot runs nothing again.
stack=networkd
variant=sealed
describe="CAPV worker node: jinja user-data rendered from guestinfo metadata (local_hostname, ds.meta_data.hostname), NIC matched by MAC renamed eth0, kubeadm join run once with the rendered node name, sentinel and boot-finished written, cloud-init status --wait done"

scenario_prepare() {
    local g=$scn_dir/disk/host/guestinfo
    cat >"$scn_dir/metadata.yaml" <<META
instance-id: "capv-md-0-7f9c4"
local-hostname: "capv-md-0-7f9c4"
wait-on-network:
  ipv4: true
  ipv6: false
network:
  version: 2
  ethernets:
    id0:
      match:
        macaddress: "$vm_mac"
      set-name: "eth0"
      wakeonlan: true
      dhcp4: false
      dhcp6: false
      accept-ra: false
      addresses:
      - "192.168.72.50/24"
      gateway4: "192.168.72.1"
      nameservers:
        addresses:
        - "192.168.72.2"
META
    base64 -w0 "$scn_dir/metadata.yaml" >"$g/guestinfo.metadata"
    scenario_netdev="net=192.168.72.0/24,host=192.168.72.1,dns=192.168.72.2"
    printf 'base64' >"$g/guestinfo.metadata.encoding"
    cat >"$scn_dir/userdata.yaml" <<'USERDATA'
## template: jinja
#cloud-config

write_files:
-   path: /usr/local/bin/kubeadm
    owner: root:root
    permissions: '0755'
    content: |
      #!/bin/sh
      # Stand-in for kubeadm: records what it was asked and the config it read.
      echo "$@" >/var/lib/vmtest-kubeadm-args
      cp /run/kubeadm/kubeadm-join-config.yaml /var/lib/vmtest-kubeadm-config
-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      discovery:
        bootstrapToken:
          apiServerEndpoint: 192.168.72.10:6443
          token: abcdef.0123456789abcdef
          unsafeSkipCAVerification: true
      kind: JoinConfiguration
      nodeRegistration:
        criSocket: /var/run/containerd/containerd.sock
        kubeletExtraArgs:
          cloud-provider: external
        name: '{{ local_hostname }}'
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
runcmd:
  - "hostnamectl set-hostname \"{{ ds.meta_data.hostname }}\""
  - "echo \"::1         ipv6-localhost ipv6-loopback localhost6 localhost6.localdomain6\" >/etc/hosts"
  - "echo \"127.0.0.1   {{ ds.meta_data.hostname }} {{ local_hostname }} localhost localhost.localdomain localhost4 localhost4.localdomain4\" >>/etc/hosts"
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
users:
  - name: capv
    sudo: ALL=(ALL) NOPASSWD:ALL
    ssh_authorized_keys:
      - "@KEY@"
USERDATA
    rm -f "$scn_dir/capv_key" "$scn_dir/capv_key.pub"
    ssh-keygen -q -t ed25519 -N '' -C capv@vmtest -f "$scn_dir/capv_key"
    sed -i "s|@KEY@|$(cat "$scn_dir/capv_key.pub")|" "$scn_dir/userdata.yaml"
    base64 -w0 "$scn_dir/userdata.yaml" >"$g/guestinfo.userdata"
    printf 'base64' >"$g/guestinfo.userdata.encoding"
    local n
    for n in 1 2; do
        cat >"$scn_dir/disk/host/after-boot-$n" <<EOF
out=/vmtest/results/boot-$n
cat /var/lib/vmtest-kubeadm-args >"\$out/kubeadm-args.txt" 2>&1
cat /var/lib/vmtest-kubeadm-config >"\$out/kubeadm-config.txt" 2>&1
cat /etc/hosts >"\$out/hosts.txt" 2>&1
cat /run/cluster-api/bootstrap-success.complete >"\$out/sentinel.txt" 2>&1
ls /var/lib/cloud/instance/boot-finished >"\$out/boot-finished.txt" 2>&1
stat -c '%a %U:%G %n' /run/cloud-init/instance-data.json /run/cloud-init/instance-data-sensitive.json >"\$out/instance-data-modes.txt" 2>&1
cloud-init query local_hostname >"\$out/query-local-hostname.txt" 2>&1
cloud-init query ds.meta_data.instance_id >"\$out/query-instance-id.txt" 2>&1
ip -o link show >"\$out/links.txt" 2>&1
ls -l /var/lib/vmtest-kubeadm-args >"\$out/kubeadm-ran.txt" 2>&1
stat -c '%Y' /var/lib/vmtest-kubeadm-args >>"\$out/kubeadm-ran.txt" 2>&1
EOF
    done
}

scenario_boots() {
    boot 1
    boot 2
}

scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name from local-hostname" has 1 hostname.txt '^capv-md-0-7f9c4$'
    check "boot 1: the NIC matched by MAC is renamed eth0" has 1 links.txt '^[0-9]+: eth0:'
    check "boot 1: eth0 has exactly 192.168.72.50/24" exact_addresses 1 eth0 192.168.72.50/24
    check "boot 1: default route via gateway4" has 1 ip-route.txt '^default via 192.168.72.1 dev eth0'
    check "boot 1: kubeadm join ran with CABPK's arguments" has 1 kubeadm-args.txt '^join --config /run/kubeadm/kubeadm-join-config.yaml$'
    check "boot 1: the join configuration names the node from {{ local_hostname }}" has 1 kubeadm-config.txt "^  name: 'capv-md-0-7f9c4'$"
    check "boot 1: /etc/hosts from {{ ds.meta_data.hostname }} and {{ local_hostname }}" has 1 hosts.txt '^127\.0\.0\.1   capv-md-0-7f9c4 capv-md-0-7f9c4 localhost '
    check "boot 1: the bootstrap sentinel CAPI checks for" has 1 sentinel.txt '^success$'
    check "boot 1: /var/lib/cloud/instance/boot-finished exists" has 1 boot-finished.txt 'boot-finished$'
    check "boot 1: cloud-init status --wait: done" has 1 cloud-init-status.txt '^status: done$'
    check "boot 1: cloud-init status --wait exits 0" has 1 cloud-init-status.txt '^exit=0$'
    check "boot 1: instance data 0644, the sensitive copy 0600" has 1 instance-data-modes.txt '^600 root:root /run/cloud-init/instance-data-sensitive.json$'
    check "boot 1: cloud-init query local_hostname" has 1 query-local-hostname.txt '^capv-md-0-7f9c4$'
    check "boot 1: cloud-init query ds.meta_data.instance_id" has 1 query-instance-id.txt '^capv-md-0-7f9c4$'
    check "boot 1: vmcust status is ok (exit 0)" has 1 vmcust-status.txt '^exit=0$'
    check "boot 2: both vmcust units succeeded" units_ok 2
    check "boot 2: still eth0" has 2 links.txt '^[0-9]+: eth0:'
    check "boot 2: kubeadm did not run again" cmp "$(r 1 kubeadm-ran.txt)" "$(r 2 kubeadm-ran.txt)"
}
