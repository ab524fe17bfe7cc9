# A RHEL-family vSphere template (RHEL, Rocky, AlmaLinux 8 or 9) with vmcust instead of
# cloud-init, beside the Debian one in ../template.pkr.hcl: Packer boots the installer
# ISO with your kickstart on a second CD labelled OEMDRV (Anaconda reads /ks.cfg from a
# volume of that label by itself, no boot command needed), installs the vmcust .rpm and
# open-vm-tools, checks vmcust's settings, and seals the template as the last step
# (docs/vcenter.md, docs/user-guide.md). Fill in the variables (or a .pkrvars.hcl file);
# nothing here names a real server. The kickstart is yours: it only needs to install
# with a network and give Packer an SSH login with sudo (user --groups=wheel).
#
#   scripts/package.sh
#   packer init examples/packer/rhel && packer build -var-file=my.pkrvars.hcl examples/packer/rhel

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
  description = "the installer ISO on a datastore, e.g. [datastore1] iso/Rocky-9-latest-x86_64-dvd.iso"
}
variable "kickstart" {
  type        = string
  description = "your kickstart file; it is put on the OEMDRV CD as /ks.cfg, so it must be named ks.cfg"
}
variable "guest_os_type" {
  type        = string
  default     = "rhel9_64Guest"
  description = "rhel9_64Guest or rhel8_64Guest: vCenter offers guest customization only for a Linux guest OS type it knows (docs/vcenter.md)"
}
variable "ssh_username" { type = string }
variable "ssh_password" {
  type      = string
  sensitive = true
}
variable "vmcust_rpm" {
  type    = string
  default = "target/pkg/out/vmcust-0.1.0-1.x86_64.rpm"
}

source "vsphere-iso" "rhel" {
  vcenter_server       = var.vcenter_server
  username             = var.vcenter_username
  password             = var.vcenter_password
  datacenter           = var.datacenter
  cluster              = var.cluster
  datastore            = var.datastore
  vm_name              = "rhel-vmcust"
  guest_os_type        = var.guest_os_type
  CPUs                 = 2
  RAM                  = 2048
  firmware             = "efi"
  disk_controller_type = ["pvscsi"]
  storage {
    disk_size             = 20480
    disk_thin_provisioned = true
  }
  network_adapters {
    network      = var.network
    network_card = "vmxnet3"
  }
  iso_paths = [var.iso_path]
  cd_files  = [var.kickstart]
  cd_label  = "OEMDRV"
  # Anaconda's boot menu: the first entry after the media check, chosen at once.
  boot_wait    = "5s"
  boot_command = ["<up><enter>"]
  ssh_username = var.ssh_username
  ssh_password = var.ssh_password
  ssh_timeout  = "45m"
  # The template that vCenter customizes with a guest customization spec per clone.
  convert_to_template = true
  shutdown_command    = "echo '${var.ssh_password}' | sudo -S systemctl poweroff"
}

build {
  sources = ["source.vsphere-iso.rhel"]

  provisioner "file" {
    source      = var.vmcust_rpm
    destination = "/tmp/vmcust.rpm"
  }

  provisioner "shell" {
    execute_command = "echo '${var.ssh_password}' | sudo -S sh -c '{{ .Vars }} {{ .Path }}'"
    inline = [
      "set -e",
      # No cloud-init in this template: vmcust stands in for it (docs/boot.md). A
      # cloud-init left installed would be used by open-vm-tools instead.
      "dnf remove -y cloud-init || true",
      # The package is static: it needs no library, only open-vm-tools to hand over.
      "dnf install -y open-vm-tools /tmp/vmcust.rpm",
      "rm -f /tmp/vmcust.rpm",
      "systemctl enable --now vmtoolsd.service",
      # Only if your specs carry custom scripts.
      "vmware-toolbox-cmd config set deployPkg enable-custom-scripts true",
      # Fails the build on a bad /etc/vmcust/vmcust.conf instead of the first clone's boot.
      "vmcust settings check",
      "vmcust detect",
      # RHEL proper: a template must not carry this machine's subscription.
      "if command -v subscription-manager >/dev/null; then subscription-manager unregister || true; subscription-manager clean; fi",
      "dnf clean all",
      # Seal, last: the command Packer builds for cloud-init templates run, answered by
      # the stand-in (exit 0), then the host keys (clones get fresh ones of these types).
      "cloud-init clean --logs --seed --machine-id",
      "vmcust clean --ssh-host-keys",
    ]
  }
}
