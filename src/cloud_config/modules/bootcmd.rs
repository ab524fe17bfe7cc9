//! `bootcmd`: commands run on every boot, early, before the network (cloud-init's
//! init stage), as one shell script with `INSTANCE_ID` set.

use crate::cloud_config::apply::commands::run_commands;
use crate::cloud_config::apply::driver::{absent, from_end, ModuleOutcome, Step};
use crate::cloud_config::apply::preview::{script, Look};
use crate::cloud_config::commands::commands;
use crate::cloud_config::node::Node;
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;

/// `bootcmd`: every boot, early.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.bootcmd = commands(r, key, node, false);
}

/// Runs the commands as one script.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let (ctx, cfg) = (s.ctx, s.cfg);
    if cfg.bootcmd.is_empty() {
        return absent("bootcmd");
    }
    if let Err(o) = s.start() {
        return o;
    }
    let env = vec![("INSTANCE_ID".to_string(), ctx.instance.to_string())];
    let script = ctx.scripts_dir().join("bootcmd");
    let end = run_commands(
        &ctx.root,
        "bootcmd",
        &script,
        &cfg.bootcmd,
        env,
        ctx.command_timeout,
        ctx.stop,
    );
    from_end(end, format!("{} command(s)", cfg.bootcmd.len()))
}

/// The script's lines.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    script(&l.cfg.bootcmd, "nothing: no bootcmd")
}
