# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A clone of a sealed template (variant sealed: openssh-server, a machine-id left set by
# mistake, `cloud-init clean --logs` as Packer's last step) gets the static IMC spec: it
# must come up with its own machine-id and SSH host keys, once per instance.
stack=networkd
variant=sealed
describe="clone of a sealed template (machine-id left set, SSH host keys): boot 1 static spec applied, a new valid machine-id, the template's SSH key types each with a new fingerprint, sshd -t passes and ssh.service active; boot 2 keeps both"
scenario_prepare() { hand_over_spec "$(static_spec)"; }
scenario_boots() {
    boot 1
    boot 2
}
# key_types FILE: the key types (last field of `ssh-keygen -lf`, e.g. "(ED25519)"), sorted.
key_types() { awk '{ print $NF }' "$1" | sort; }
# fingerprints FILE: the fingerprints (second field), sorted.
fingerprints() { awk '{ print $2 }' "$1" | sort; }
machine_id_of() { tr -d '[:space:]' <"$(r "$1" machine-id)"; }
valid_new_machine_id() {
    local id
    id=$(machine_id_of "$1")
    [[ $id =~ ^[0-9a-f]{32}$ ]] && [ "$id" != "$template_machine_id" ]
}
same_key_types_as_template() {
    [ -s "$template_keys" ] && [ "$(key_types "$template_keys")" = "$(key_types "$(r "$1" ssh-host-keys.txt)")" ]
}
# No fingerprint of boot N is one of the template's.
all_fingerprints_new() {
    local f
    [ -s "$(r "$1" ssh-host-keys.txt)" ] || return 1
    for f in $(fingerprints "$(r "$1" ssh-host-keys.txt)"); do
        grep -qF -- " $f " "$template_keys" && return 1
    done
    return 0
}
unit_active() { [ "$(unit_prop "$(r "$1" units.txt)" "$2" ActiveState)" = active ]; }
scenario_checks() {
    template_keys=$work/images/$image.ssh-fingerprints
    note "template: machine-id $template_machine_id; host keys: $(key_types "$template_keys" | tr '\n' ' ')"
    check_static 1
    check_reported 1
    check "boot 1: /etc/machine-id is a valid 32-hex id, not the template's" valid_new_machine_id 1
    check "boot 1: the template's SSH host key types, no more, no fewer" same_key_types_as_template 1
    check "boot 1: every SSH host key has a new fingerprint" all_fingerprints_new 1
    check "boot 1: sshd -t passes" has 1 sshd-t.txt '^exit=0$'
    check "boot 1: ssh.service active" unit_active 1 ssh.service
    check "boot 2: machine-id unchanged from boot 1" test "$(machine_id_of 2)" = "$(machine_id_of 1)"
    check "boot 2: SSH host key fingerprints unchanged from boot 1" \
        test "$(fingerprints "$(r 2 ssh-host-keys.txt)")" = "$(fingerprints "$(r 1 ssh-host-keys.txt)")"
    check "boot 2: ssh.service active" unit_active 2 ssh.service
    note "boot 1 machine-id $(machine_id_of 1); boot 2 $(machine_id_of 2)"
}
