//! Making the network stack see the files just written. At boot the early stage runs
//! before any stack starts, so only netplan needs a step: its systemd generator already
//! turned the template's YAML into `/run/systemd/network` (or NetworkManager's) files when
//! systemd started, so `netplan generate` must run again. A customization applied while
//! the network is up (a late hand-over, `vmcust-imc.service`) also asks the running stack
//! to take the new files.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::plan::network::networkmanager::CONNECTIONS_DIR;
use crate::plan::network::Renderer;
use crate::plan::{Action, Plan};
use crate::process::{run, Cmd, Output};

/// How long one reload command may take.
const TIMEOUT: Duration = Duration::from_secs(60);
const GRACE: Duration = Duration::from_secs(5);

/// The commands that make `renderer`'s stack see the files of `plan`: before the network
/// starts (`network_up` false) or while it runs, in order.
pub fn commands(renderer: Renderer, plan: &Plan, network_up: bool) -> Vec<Vec<String>> {
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if !network_up {
        return match renderer {
            Renderer::Netplan => vec![words(&["netplan", "generate"])],
            _ => Vec::new(),
        };
    }
    match renderer {
        // Regenerates /run/systemd/network (or NetworkManager's) and applies it.
        Renderer::Netplan => vec![words(&["netplan", "apply"])],
        // Re-reads .network files and reconfigures every interface whose file changed.
        Renderer::Networkd => vec![words(&["networkctl", "reload"])],
        Renderer::NetworkManager => {
            let mut cmds = vec![words(&["nmcli", "connection", "reload"])];
            for a in &plan.actions {
                let Action::WriteFile { path, .. } = a else {
                    continue;
                };
                if path.parent().and_then(|p| p.to_str()) != Some(CONNECTIONS_DIR) {
                    continue;
                }
                if let Some(id) = path.file_stem().and_then(|s| s.to_str()) {
                    cmds.push(words(&["nmcli", "connection", "up", "id", id]));
                }
            }
            cmds
        }
        Renderer::Eni => vec![words(&["systemctl", "restart", "networking.service"])],
        Renderer::Sysconfig => vec![words(&["systemctl", "restart", "network.service"])],
        Renderer::Suse => vec![words(&["wicked", "ifreload", "all"])],
    }
}

/// Runs [`commands`]; each failure is a warning (the files are right, and the next boot
/// uses them), returned for the log.
pub fn reconfigure(
    renderer: Renderer,
    plan: &Plan,
    network_up: bool,
    stop: &AtomicBool,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for cmd in commands(renderer, plan, network_up) {
        let args: Vec<&str> = cmd[1..].iter().map(String::as_str).collect();
        let shown = cmd.join(" ");
        // A bare name (`netplan`) is looked up on the runner's fixed PATH.
        let mut run_cmd = Cmd::new(&cmd[0], &args, TIMEOUT);
        run_cmd.grace = GRACE;
        match run(&run_cmd, Output::Bytes(16 * 1024), stop) {
            Ok(f) if f.success() => tracing::info!("network reconfigured: {shown}"),
            Ok(f) => warnings.push(format!(
                "{shown} ended with {:?}; the new network configuration takes effect at the \
                 next boot: {}",
                f.ended,
                String::from_utf8_lossy(&f.stderr).trim()
            )),
            Err(e) => warnings.push(format!("could not run {shown}: {e}")),
        }
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Contents;

    #[test]
    fn networkmanager_brings_up_each_of_our_profiles() {
        let plan = Plan {
            actions: vec![Action::WriteFile {
                path: format!("{CONNECTIONS_DIR}/vmcust-ens192.nmconnection").into(),
                mode: 0o600,
                contents: Contents::text(String::new()),
                purpose: "test",
            }],
        };
        let cmds = commands(Renderer::NetworkManager, &plan, true);
        assert_eq!(
            cmds[1],
            ["nmcli", "connection", "up", "id", "vmcust-ens192"]
        );
        assert_eq!(
            commands(Renderer::Netplan, &plan, true),
            [["netplan", "apply"]]
        );
        // At boot, before any stack starts: only netplan's generator must run again.
        assert_eq!(
            commands(Renderer::Netplan, &plan, false),
            [["netplan", "generate"]]
        );
        assert!(commands(Renderer::Networkd, &plan, false).is_empty());
    }
}
