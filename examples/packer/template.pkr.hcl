# A vSphere template with vmcust instead of cloud-init: Packer builds the VM from an
# installer ISO, installs the vmcust package and open-vm-tools, checks vmcust's settings,
# and seals the template as the last step (docs/user-guide.md, "Building a template with
# Packer"). Fill in the variables (or a .pkrvars.hcl file); nothing here names a real
# server. The OS installer's unattended answers (preseed, kickstart) are yours: they only
# need to give Packer an SSH login with sudo.
#
#   scripts/package.sh
#   packer init examples/packer && packer build -var-file=my.pkrvars.hcl examples/packer

packer {
  required_plugins {
    vsphere = {
      source  = "github.com/hashicorp/vsphere"
      version = ">= 1.2.0"
    }
  }
}

variable "vcenter_server" { type = string }
variable "vcenter_username" { type = string }
variable "vcenter_password" {
  type      = string
  sensitive = true
}
variable "datacenter" { type = string }
variable "cluster" { type = string }
variable "datastore" { type = string }
variable "network" { type = string }
variable "iso_path" {
  type        = string
  description = "the installer ISO on a datastore, e.g. [datastore1] iso/debian-12-amd64-netinst.iso"
}
variable "ssh_username" { type = string }
variable "ssh_password" {
  type      = string
  sensitive = true
}
variable "vmcust_deb" {
  type    = string
  default = "target/pkg/out/vmcust_0.1.0-1_amd64.deb"
}

source "vsphere-iso" "debian" {
  vcenter_server      = var.vcenter_server
  username            = var.vcenter_username
  password            = var.vcenter_password
  datacenter          = var.datacenter
  cluster             = var.cluster
  datastore           = var.datastore
  vm_name             = "debian-12-vmcust"
  guest_os_type       = "debian12_64Guest"
  CPUs                = 2
  RAM                 = 2048
  disk_controller_type = ["pvscsi"]
  storage {
    disk_size             = 16384
    disk_thin_provisioned = true
  }
  network_adapters {
    network      = var.network
    network_card = "vmxnet3"
  }
  iso_paths    = [var.iso_path]
  ssh_username = var.ssh_username
  ssh_password = var.ssh_password
  ssh_timeout  = "30m"
  # The template that vCenter customizes with a guest customization spec per clone.
  convert_to_template = true
  shutdown_command    = "echo '${var.ssh_password}' | sudo -S systemctl poweroff"
}

build {
  sources = ["source.vsphere-iso.debian"]

  provisioner "file" {
    source      = var.vmcust_deb
    destination = "/tmp/vmcust.deb"
  }

  provisioner "shell" {
    execute_command = "echo '${var.ssh_password}' | sudo -S sh -c '{{ .Vars }} {{ .Path }}'"
    inline = [
      "set -e",
      "apt-get update",
      # No cloud-init in this template: vmcust stands in for it (docs/boot.md).
      "apt-get purge -y cloud-init || true",
      "apt-get install -y open-vm-tools /tmp/vmcust.deb",
      "rm -f /tmp/vmcust.deb",
      # Only if your specs carry custom scripts.
      "vmware-toolbox-cmd config set deployPkg enable-custom-scripts true",
      # Fails the build on a bad /etc/vmcust/vmcust.conf instead of the first clone's boot.
      "vmcust settings check",
      "vmcust detect",
      # Seal, last: the command Packer builds for cloud-init templates run, answered by
      # the stand-in (exit 0), then the host keys (clones get fresh ones of these types).
      "cloud-init clean --logs --seed --machine-id",
      "vmcust clean --ssh-host-keys",
    ]
  }
}
