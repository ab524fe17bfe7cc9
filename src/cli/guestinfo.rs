//! `vmcust guestinfo get|set`: read and write guestinfo keys through the guest RPC
//! transports (or the fake directory), like `vmware-rpctool "info-get …"`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use crate::host::{self, guestinfo_key, TransportOptions};

/// How to reach the host.
#[derive(Debug, Clone, Args)]
pub(crate) struct TransportArgs {
    /// Use a directory of key files as the host (the test fake) instead of the real one.
    #[arg(long, value_name = "DIR")]
    pub guestinfo_dir: Option<PathBuf>,
    /// Seconds to wait for vmware-rpctool / vmtoolsd before killing it.
    #[arg(long, value_name = "SECS", default_value_t = host::rpctool::DEFAULT_TIMEOUT.as_secs_f64())]
    pub rpc_timeout: f64,
}

impl TransportArgs {
    /// The transport options these arguments ask for.
    pub(crate) fn options(&self) -> Result<TransportOptions> {
        if !(self.rpc_timeout.is_finite() && self.rpc_timeout > 0.0 && self.rpc_timeout < 86400.0) {
            return Err(crate::failure::Failure::invalid(
                "--rpc-timeout must be a positive number of seconds",
            )
            .into());
        }
        Ok(TransportOptions {
            guestinfo_dir: self.guestinfo_dir.clone(),
            timeout: Some(Duration::from_secs_f64(self.rpc_timeout)),
        })
    }
}

/// Read or write guestinfo keys through the guest RPC transports.
#[derive(Debug, Args)]
pub(crate) struct GuestinfoArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: GuestinfoAction,
}

/// The `guestinfo` sub-commands.
#[derive(Debug, Subcommand)]
pub(crate) enum GuestinfoAction {
    /// Print a key's value; exit 1 with "no value found" when the host has none.
    Get {
        /// The key, with or without the `guestinfo.` prefix.
        key: String,
        /// Apply the key's `.encoding` (base64, gzip+base64) and treat `---` as absent.
        #[arg(long)]
        decode: bool,
        /// How to reach the host.
        #[command(flatten)]
        transport: TransportArgs,
    },
    /// Set a key (an empty value is sent as a single space).
    Set {
        /// The key, with or without the `guestinfo.` prefix.
        key: String,
        /// The value.
        value: String,
        /// How to reach the host.
        #[command(flatten)]
        transport: TransportArgs,
    },
}

/// Runs `vmcust guestinfo`.
pub(super) fn run(args: GuestinfoArgs) -> Result<()> {
    match args.action {
        GuestinfoAction::Get {
            key,
            decode,
            transport,
        } => {
            let key = guestinfo_key(&key);
            let mut rpc = host::open(&transport.options()?);
            let value = if decode {
                crate::source::guestinfo::read_key(&mut *rpc, &key)?
            } else {
                rpc.get_guestinfo(&key)
                    .with_context(|| format!("reading {key}"))?
            };
            let Some(mut value) = value else {
                anyhow::bail!("{key}: no value found");
            };
            if value.last() != Some(&b'\n') {
                value.push(b'\n');
            }
            std::io::stdout()
                .write_all(&value)
                .context("writing to stdout")?;
            Ok(())
        }
        GuestinfoAction::Set {
            key,
            value,
            transport,
        } => {
            let key = guestinfo_key(&key);
            let mut rpc = host::open(&transport.options()?);
            rpc.set_guestinfo(&key, &value)
                .with_context(|| format!("setting {key}"))?;
            Ok(())
        }
    }
}
