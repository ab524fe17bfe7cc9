//! The `vmcust` command; everything lives in the library's `cli` module. Started under
//! the name `cloud-init` (the symlink the install script makes for open-vm-tools), it
//! answers as cloud-init instead (`vmcust::persona`).

fn main() -> std::process::ExitCode {
    if vmcust::persona::invoked_as_cloud_init() {
        return vmcust::persona::main();
    }
    vmcust::cli::main()
}
