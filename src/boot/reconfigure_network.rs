//! Making the network stack see the files just written: the boot carries out the plan's
//! [`Reload`] step, whose commands the renderer's entry in the renderer table chose
//! (`plan::network::renderers`). At boot the early stage runs before any stack starts,
//! so only netplan has a command then (its systemd generator already turned the
//! template's YAML into `/run` files); a customization applied while the network is up (a
//! late hand-over, `vmcust-imc.service`) asks the running stack to take the new files.
//! Another root than `/` is never the running system: its commands are logged, not run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::plan::network::renderers::Reload;
use crate::process::{run, Cmd, Output};

/// How long one reload command may take.
const TIMEOUT: Duration = Duration::from_secs(60);
const GRACE: Duration = Duration::from_secs(5);

/// Runs the commands of `reload`, in order; each failure is a warning (the files are
/// right, and the next boot uses them), returned for the log.
pub(crate) fn reconfigure(reload: &Reload, stop: &AtomicBool) -> Vec<String> {
    let mut warnings = Vec::new();
    for cmd in &reload.commands {
        let shown = cmd.join(" ");
        if !reload.running_system {
            tracing::info!("network reload not run (the root is not the running system): {shown}");
            continue;
        }
        let args: Vec<&str> = cmd[1..].iter().map(String::as_str).collect();
        // A bare name (`netplan`) is looked up on the runner's fixed PATH.
        let mut run_cmd = Cmd::new(&cmd[0], &args, TIMEOUT);
        run_cmd.grace = GRACE;
        match run(&run_cmd, Output::Bytes(16 * 1024), stop) {
            Ok(f) if f.success() => tracing::info!("network reconfigured: {shown}"),
            Ok(f) => warnings.push(format!(
                "{shown} ended with {}; the new network configuration takes effect at the \
                 next boot: {}",
                f.ended,
                String::from_utf8_lossy(&f.stderr).trim()
            )),
            Err(e) => warnings.push(format!("could not run {shown}: {e}")),
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::network::Renderer;

    #[test]
    fn another_root_is_never_reloaded() {
        // A command that would fail loudly if it ran.
        let reload = Reload {
            renderer: Renderer::Netplan,
            network_up: true,
            running_system: false,
            commands: vec![vec!["/nonexistent/netplan".into(), "apply".into()]],
        };
        assert!(reconfigure(&reload, &AtomicBool::new(false)).is_empty());
        let running = Reload {
            running_system: true,
            ..reload
        };
        let warnings = reconfigure(&running, &AtomicBool::new(false));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("/nonexistent/netplan apply"),
            "{warnings:?}"
        );
    }
}
