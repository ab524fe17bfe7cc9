//! The `vmcust` command; everything lives in the library's `cli` module.

fn main() -> std::process::ExitCode {
    vmcust::cli::main()
}
