//! The `vmcust` command; everything lives in the library's `cli` module. Started under
//! the name `cloud-init` (the symlink the install script makes for open-vm-tools), it
//! answers as cloud-init instead (the library's `cli::stand_in`).
//!
//! `main` is the C entry point (`no_main`) rather than Rust's: std's start-up reads
//! `/proc/self/maps` through glibc's sscanf to place a stack guard, a third of what a
//! whole `vmcust plan` costs over a trivial process (docs/benchmarks.md). What that
//! start-up did that vmcust relies on is done here: SIGPIPE ignored (a closed pipe is an
//! error to handle, not death mid-customization; std resets it for children it spawns)
//! and stdout flushed before exit. The umask is set to [`vmcust::UMASK`] first thing. Arguments still come from std (glibc hands them to
//! std's init_array hook). A stack overflow now ends in SIGSEGV instead of a message.
#![no_main]

use std::process::ExitCode;

fn run() -> ExitCode {
    vmcust::main()
}

/// The process entry point, called by the C runtime.
#[no_mangle]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    // SAFETY: setting a signal's disposition to SIG_IGN and the file mode creation mask
    // have no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        // The caller's umask (0 in an image build step) never decides a mode: every file
        // and directory vmcust creates is given its own, and what its mode leaves to the
        // mask, and what the programs it runs create, get the usual 022.
        libc::umask(vmcust::UMASK);
    }
    let code = match std::panic::catch_unwind(run) {
        Ok(code) => code,
        // The panic message is already on stderr; 101 as Rust's own runtime exits.
        Err(_) => ExitCode::from(101),
    };
    let _ = std::io::Write::flush(&mut std::io::stdout());
    (0..=255u8)
        .find(|&n| ExitCode::from(n) == code)
        .map_or(1, std::ffi::c_int::from)
}
