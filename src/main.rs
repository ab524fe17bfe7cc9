//! The `vmcust` command.
fn main() {}
