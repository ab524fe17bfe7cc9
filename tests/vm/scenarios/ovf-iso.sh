# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# OVF environment on a CD (the "ISO" OVF transport) on the systemd-networkd template:
# host name, SSH key, a netplan v2 network-config and a user-data shell script
# (ovf_env_iso in lib.sh, shared with ovf-iso-late-cd and cloud-init-ovf).
stack=networkd
describe="OVF ISO: host name, SSH key in root's authorized_keys, network-config (static address, route, DNS), user-data #! script run once"
scenario_prepare() { ovf_env_iso; }
scenario_boots() { boot 1; }
scenario_checks() { check_ovf_env_applied 1; }
