//! `runcmd`: commands run once per instance, late, as one script among the user-data's
//! scripts (`scripts_user` runs them in name order; [`crate::cloud_config::apply::scripts`]).

use crate::cloud_config::apply::preview::{script, Look};
use crate::cloud_config::commands::commands;
use crate::cloud_config::node::Node;
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;

/// `runcmd`: once per instance, late.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.runcmd = commands(r, key, node, true);
}

/// The script's lines.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    script(&l.cfg.runcmd, "nothing: no runcmd")
}
