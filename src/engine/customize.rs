//! Customize: the gathered customization and the target root's facts become one
//! [`Plan`] (every file, the live host name) and the boot steps around it (marker,
//! scripts, user-data, redaction, report). `vmcust plan` prints exactly this; `vmcust
//! apply` and `vmcust run` carry out exactly this.

use std::path::Path;

use serde::Serialize;

use crate::facts::{AccountsWanted, Facts, Wanted};
use crate::hygiene::{HygienePlan, Switches};
use crate::model::{Customization, FileName, InstanceId, UserName};
use crate::plan::network::renderers::{self, Chosen, Named, NamedBy, Reload};
use crate::plan::network::Renderer;
use crate::plan::{plan, Action, Plan, PlanError, PlanOptions};
use crate::root::Root;
use crate::settings::{CloudConfigUnknown, Settings, UserDataHandler};
use crate::source::{SourceData, UserData};

/// Choices that change how, not what.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options<'a> {
    /// Network stack to write for, and who named it; `None` takes the one the root's
    /// facts detected (an error when they name none).
    pub renderer: Option<Named>,
    /// Whose `authorized_keys` gets the SSH keys when the source names nobody (the
    /// settings file's `[ssh] user`); `None` is root.
    pub ssh_user: Option<&'a UserName>,
    /// Who applies cloud-config user-data (`[user-data] handler`).
    pub user_data_handler: UserDataHandler,
    /// What a cloud-config key vmcust does not apply does to the document (`[user-data]
    /// cloud_config_unknown`).
    pub cloud_config_unknown: CloudConfigUnknown,
    /// Which parts of clone hygiene a boot does for a new instance (all off by default).
    pub hygiene: Switches,
    /// The network is up already when the plan is carried out (a late hand-over), so
    /// the stack must be asked to take the new files; false for the early stage.
    pub network_up: bool,
}

impl<'a> Options<'a> {
    /// The options the settings file asks for, `renderer` (from `--renderer`) overriding
    /// its renderer.
    pub(crate) fn from_settings(settings: &'a Settings, renderer: Option<Renderer>) -> Self {
        let named = match (renderer, settings.renderer) {
            (Some(renderer), _) => Some(Named {
                renderer,
                by: NamedBy::CommandLine,
            }),
            (None, Some(renderer)) => Some(Named {
                renderer,
                by: NamedBy::Settings,
            }),
            (None, None) => None,
        };
        Options {
            renderer: named,
            ssh_user: settings.ssh_user.as_ref(),
            user_data_handler: settings.user_data_handler,
            cloud_config_unknown: settings.cloud_config_unknown,
            hygiene: Switches::from_settings(settings),
            network_up: false,
        }
    }
}

pub use crate::state::UserDataDisposition;

/// What the late stage does with `bytes`, by `[user-data] handler` and whether a real
/// cloud-init is installed.
pub fn user_data_disposition(
    bytes: &[u8],
    real_cloud_init: bool,
    handler: UserDataHandler,
) -> UserDataDisposition {
    let to_cloud_init = match handler {
        UserDataHandler::Auto => real_cloud_init,
        UserDataHandler::Native => false,
        UserDataHandler::CloudInit => true,
    };
    if to_cloud_init && real_cloud_init {
        return UserDataDisposition::CloudInitSeed;
    }
    if bytes.starts_with(b"#!") {
        return UserDataDisposition::RunScript;
    }
    if !to_cloud_init {
        return UserDataDisposition::Native;
    }
    let first = String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    UserDataDisposition::Rejected(format!(
        "user-data starting with {} is for cloud-init ([user-data] handler = cloud-init), \
         which is not installed; set handler = auto or native to have vmcust apply it",
        crate::model::quote(&first)
    ))
}

/// User-data kept for the late stage.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct UserDataStep {
    /// Its source.
    pub from: &'static str,
    /// Its size in bytes.
    pub bytes: usize,
    /// What the late stage will do with it.
    #[serde(flatten)]
    pub disposition: UserDataDisposition,
    /// What vmcust applies of it, when it applies it natively.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native: Option<super::native::NativeSummary>,
}

/// The boot engine's steps around the plan, in the order they happen.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct BootSteps {
    /// The instance the record is kept for.
    pub instance_id: Option<InstanceId>,
    /// The MARKER-ID whose marker is written at the end; password and scripts run only
    /// when it is new.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker: Option<MarkerStep>,
    /// The custom script run before the files are written (`precustomization`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_script: Option<FileName>,
    /// The same script run by the late stage (`postcustomization`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_script: Option<FileName>,
    /// User-data kept for the late stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_data: Option<UserDataStep>,
    /// Guestinfo keys cleared on the host once everything is recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redact: Vec<String>,
    /// Clone hygiene for a new instance (machine-id, SSH host keys), done once the files
    /// are written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hygiene: Option<HygienePlan>,
    /// Making the network stack read the new files, last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_reload: Option<Reload>,
    /// What the spec asks for that will not be done, and why (the marker rule).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// What was asked for and is not done (cloud-config vmcust does not apply): the
    /// customization ends degraded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<String>,
}

/// Something asked for that is left out on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Skipped {
    /// What is not done, e.g. `set the root password`.
    pub action: String,
    /// Why, and what to change to have it done.
    pub reason: String,
}

/// Why the marker rule leaves a spec's password and script out when there is no MARKER-ID.
const NO_MARKER: &str = "no [MISC] MARKER-ID: a vSphere spec's password and custom script \
     apply only with a new MARKER-ID (cloud-init's and VMware's rule); add MARKER-ID = <new id> \
     to [MISC]";

/// What the marker rule leaves out of `c`, a traditional vSphere spec's customization:
/// with no MARKER-ID (`marker` is `None`) or a used one, the root password and the custom
/// script.
pub(crate) fn marker_skips(c: &Customization, marker: Option<(&FileName, bool)>) -> Vec<Skipped> {
    let reason = match marker {
        Some((_, true)) => return Vec::new(),
        Some((id, false)) => format!(
            "marker {id} was used before ({}): a spec's password and custom script apply once per MARKER-ID; give the spec a new MARKER-ID to apply them again",
            marker_path(id).display()
        ),
        None => NO_MARKER.to_string(),
    };
    let mut out = Vec::new();
    if let Some(pw) = &c.identity.root_password {
        let action = match (pw.password.is_some(), pw.expire) {
            (true, true) => "set the root password and force its change at next login",
            (true, false) => "set the root password",
            (false, _) => "force a root password change at next login",
        };
        out.push(Skipped {
            action: action.to_string(),
            reason: reason.clone(),
        });
    }
    if let Some(script) = &c.custom_script {
        out.push(Skipped {
            action: format!("run custom script {script}"),
            reason,
        });
    }
    out
}

/// The warnings the marker rule gives for gathered sources before any root is known
/// (`vmcust show`): a password or script a spec without MARKER-ID will not apply.
pub(crate) fn marker_warnings(g: &SourceData) -> Vec<String> {
    let traditional_imc = g.imc.is_some_and(|o| !o.raw_cloud_init);
    if !traditional_imc || g.customization.marker_id.is_some() {
        return Vec::new();
    }
    marker_skips(&g.customization, None)
        .into_iter()
        .map(|s| format!("will not {}: {}", s.action, s.reason))
        .collect()
}

/// A MARKER-ID and whether it is new on this root.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MarkerStep {
    /// The marker id.
    pub id: FileName,
    /// False when the marker exists: password and scripts are left out.
    pub new: bool,
}

/// The whole job for one root.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// What is applied: the customization after the marker rule.
    pub customization: Customization,
    /// The files and the live host name.
    pub plan: Plan,
    /// The boot steps around the plan.
    pub steps: BootSteps,
    /// The renderer used for the network and why, if there is a network.
    pub renderer: Option<Chosen>,
    /// How each network `match` entry was resolved against the root's interfaces.
    pub network_matches: Vec<crate::plan::network::resolve::Resolution>,
}

/// The marker file for a MARKER-ID.
pub(crate) use crate::state::marker_path;

/// The facts the engine's plan of `c` needs: its time zone's file, the hardware clock
/// setting, the network and what its password and SSH keys need.
pub fn wanted(c: &Customization) -> Wanted {
    Wanted {
        zones: c.identity.time_zone.iter().map(|z| z.to_string()).collect(),
        adjtime: true,
        network: true,
        accounts: Some(AccountsWanted::of(&c.identity)),
        ..Wanted::default()
    }
}

/// Plans everything `g` asks for on `root`: reads the facts, applies the marker rule
/// (a vSphere spec's password and scripts run once per new MARKER-ID, never without
/// one, as VMware does), and plans the files and the live host name.
pub(crate) fn prepare(
    root: &Root,
    g: &SourceData,
    opts: Options,
) -> Result<Prepared, PrepareError> {
    let mut c = g.customization.clone();
    if c.identity.ssh_user.is_none() {
        c.identity.ssh_user = opts.ssh_user.cloned();
    }
    let mut steps = BootSteps {
        instance_id: c.instance_id.clone(),
        redact: g.redact.clone(),
        ..BootSteps::default()
    };
    let traditional_imc = g.imc.is_some_and(|o| !o.raw_cloud_init);
    if traditional_imc {
        let marker = c.marker_id.clone();
        let new = marker
            .as_ref()
            .is_some_and(|m| !root.is_file(&marker_path(m)));
        steps.skipped = marker_skips(&c, marker.as_ref().map(|m| (m, new)));
        for s in &steps.skipped {
            if marker.is_none() {
                tracing::warn!("will not {}: {}", s.action, s.reason);
            } else {
                tracing::info!("will not {}: {}", s.action, s.reason);
            }
        }
        if !new {
            c.identity.root_password = None;
        }
        let script = c.custom_script.clone().filter(|_| new);
        steps.pre_script.clone_from(&script);
        steps.post_script = script;
        steps.marker = marker.map(|id| MarkerStep { id, new });
    }
    // Native cloud-config is read first, so that the facts both planners need are
    // gathered once, for both.
    let mut native_read = None;
    let mut disposition = None;
    if let Some(UserData { bytes, .. }) = &g.user_data {
        let real = crate::cloud_init::coexist::real_cloud_init(root).is_some();
        let d = user_data_disposition(bytes, real, opts.user_data_handler);
        if d == UserDataDisposition::Native {
            let vendor = g.vendor_data.as_ref().map(|v| v.bytes.as_slice());
            let vars =
                crate::cloud_config::jinja::Vars::new(&super::native::instance_data(root, g));
            native_read = Some(
                super::native::read_native(bytes, vendor, &vars, opts.cloud_config_unknown)
                    .map_err(PrepareError::UserData)?,
            );
        }
        disposition = Some(d);
    }
    let mut want = wanted(&c);
    if let Some(read) = &native_read {
        want = want.union(crate::cloud_config::wanted::wanted(&read.config));
    }
    let facts = Facts::gather(root, &want).map_err(PrepareError::Facts)?;
    let mut native_actions = Vec::new();
    let mut host_keys = None;
    if let (Some(UserData { bytes, from }), Some(disposition)) = (&g.user_data, disposition) {
        let native = match &native_read {
            Some(read) => {
                let host = c.identity.host_name.as_ref();
                let n = super::native::plan_read(root, read, host, &facts)
                    .map_err(PrepareError::UserData)?;
                native_actions = n.actions;
                host_keys = n.host_keys;
                if n.preserve_hostname {
                    if let Some(name) = c.identity.host_name.take() {
                        steps.skipped.push(Skipped {
                            action: format!("name the host {} from the metadata", name.short()),
                            reason: "the cloud-config's preserve_hostname is true (cloud-init \
                                     keeps the host's name then, the metadata's included)"
                                .into(),
                        });
                    }
                }
                steps.degraded.extend(n.summary.not_applied.iter().cloned());
                Some(n.summary)
            }
            None => None,
        };
        steps.user_data = Some(UserDataStep {
            from,
            bytes: bytes.len(),
            disposition,
            native,
        });
    }
    // The renderer is chosen once, from the facts' detection or the name given.
    let renderer = match &c.network {
        Some(_) => Some(
            renderers::choose(opts.renderer, &facts.network)
                .map_err(|e| PrepareError::Plan(e.into()))?,
        ),
        None => None,
    };
    let mut plan = plan(
        &c,
        &facts,
        &PlanOptions {
            renderer: renderer.as_ref().map(|r| r.renderer),
        },
    )?;
    // Accounts come after the identity's files and before the live host name.
    plan.actions.extend(native_actions);
    if let Some(action) = wait_on_network_record(root, g) {
        plan.actions.push(action);
    }
    if let Some(host) = &c.identity.host_name {
        plan.actions.push(Action::SetHostname {
            name: host.short().to_string(),
        });
    }
    if let Some(id) = &steps.instance_id {
        match crate::hygiene::plan_with(root, opts.hygiene, id.as_str(), host_keys.as_ref()) {
            Ok(h) => steps.hygiene = Some(h),
            // As before hygiene was planned: a problem here is a warning, never a reason
            // to leave the clone uncustomized.
            Err(e) => {
                tracing::warn!("clone hygiene: {e:#}");
                steps.skipped.push(Skipped {
                    action: "refresh the clone's machine-id and SSH host keys".into(),
                    reason: format!("{e:#}"),
                });
            }
        }
    }
    let renames = match (&renderer, &c.network) {
        (Some(_), Some(net)) => crate::plan::network::live_renames(net, &facts.network)
            .map_err(|e| PrepareError::Plan(e.into()))?,
        _ => Vec::new(),
    };
    steps.network_reload = renderer.as_ref().map(|r| {
        Reload::plan(
            r.renderer,
            &plan.actions,
            &renames,
            opts.network_up,
            root.path() == Path::new("/"),
        )
    });
    let network_matches = match &c.network {
        Some(net) => {
            crate::plan::network::resolve::resolve(net, facts.network.links.as_deref())
                .map_err(|e| PrepareError::Plan(e.into()))?
                .resolutions
        }
        None => Vec::new(),
    };
    Ok(Prepared {
        customization: c,
        plan,
        steps,
        renderer,
        network_matches,
    })
}

/// The write of the late stage's `wait-on-network` record
/// ([`crate::state::WAIT_ON_NETWORK`]) when it differs from what `g` asks (the
/// guestinfo metadata's families; any address without one), so the late stage waits for
/// this customization's families and never for an earlier one's.
fn wait_on_network_record(root: &Root, g: &SourceData) -> Option<Action> {
    use crate::host::addresses::Wait;
    let wanted: Wait = g.wait_on_network.map(Wait::from).unwrap_or_default();
    if Wait::from_record(&crate::state::read_wait_on_network(root)) == wanted {
        return None;
    }
    Some(Action::write_file(
        crate::state::WAIT_ON_NETWORK,
        crate::plan::Contents::text(wanted.record()),
        0o644,
        "the address families the late stage waits for before publishing the \
                  guest's addresses (guestinfo metadata wait-on-network)",
    ))
}

/// Why a customization cannot be planned for a root.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The root's facts could not be read.
    #[error("{0:#}")]
    Facts(anyhow::Error),
    /// The customization does not fit the root.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The user-data cannot be applied.
    #[error(transparent)]
    UserData(crate::failure::Failure),
}

impl From<PrepareError> for crate::failure::Failure {
    fn from(e: PrepareError) -> Self {
        match e {
            PrepareError::Plan(p) => p.into(),
            PrepareError::Facts(e) => crate::failure::Failure::of(&e),
            PrepareError::UserData(f) => f,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::read_log;

    /// A customization with cloud-config gathers its facts once, for both planners: the
    /// root's `/etc/hosts` (which both the engine's identity planner and the
    /// `update_etc_hosts` module read) is read once, and so are `/etc/passwd`, `/etc/group`
    /// and `os-release`, which the accounts planner and the other modules both need.
    #[test]
    fn a_customization_with_cloud_config_reads_each_fact_once() {
        let (_dir, root) = crate::facts::scratch_root_with_etc(&[
            ("hosts", "127.0.0.1 localhost\n"),
            ("passwd", "root:x:0:0:root:/root:/bin/sh\n"),
            ("shadow", "root:*:19000:0:99999:7:::\n"),
            ("group", "root:x:0:\n"),
            ("debian_version", "12\n"),
            ("os-release", "ID=debian\n"),
        ]);
        let mut g = SourceData::default();
        g.customization.identity.host_name = Some(crate::model::HostName::parse("vm1").unwrap());
        g.customization.instance_id = Some(InstanceId::parse("i-1").unwrap());
        g.user_data = Some(UserData {
            bytes: b"#cloud-config\nmanage_etc_hosts: localhost\nusers: [default, {name: alice}]\n"
                .to_vec(),
            from: "guestinfo",
        });
        let settings = Settings::default();
        let mut opts = Options::from_settings(&settings, None);
        opts.user_data_handler = UserDataHandler::Native;
        read_log::take();
        let prepared = prepare(&root, &g, opts).unwrap();
        let reads = read_log::take();
        let native = prepared.steps.user_data.and_then(|u| u.native).unwrap();
        assert!(
            native
                .modules
                .iter()
                .any(|m| m.starts_with("update_etc_hosts")),
            "{native:?}"
        );
        // The accounts' databases too: `users:` needs `/etc/passwd`, `/etc/group` and
        // `os-release` (the default user), which other modules read as well.
        assert_eq!(native.users, ["alice", "debian"], "{native:?}");
        for file in ["/etc/hosts", "/etc/passwd", "/etc/group", "/etc/os-release"] {
            assert_eq!(
                reads.iter().filter(|r| *r == file).count(),
                1,
                "{file}: {reads:?}"
            );
        }
    }
}
