//! `vmcust status`: the run's state and every customized instance's outcome.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;

use super::Format;
use crate::boot::state::{read_results, InstanceResult};
use crate::persona::{read_status, RunStatus};
use crate::root::Root;

/// Arguments of `vmcust status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Root directory of the customized system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Serialize)]
struct Status {
    run: Option<RunStatus>,
    instances: Vec<InstanceResult>,
}

/// Runs `vmcust status`.
pub fn run(args: StatusArgs) -> Result<()> {
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    let status = Status {
        run: read_status(&root)?,
        instances: read_results(&root)?,
    };
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&status)?),
        Format::Yaml => print!("{}", crate::yaml::to_string(&status)?),
        Format::Text => {
            match &status.run {
                Some(r) => {
                    println!(
                        "run: {} (stage {})",
                        r.state.word(),
                        r.stage.as_deref().unwrap_or("-")
                    );
                    if let Some(e) = &r.last_error {
                        println!("last error: {e}");
                    }
                }
                None => println!("run: not run"),
            }
            if status.instances.is_empty() {
                println!("no instance has been customized");
            }
            for i in &status.instances {
                println!(
                    "instance {}: {} (code {}), steps: {}",
                    i.instance_id,
                    i.outcome,
                    i.code,
                    if i.steps.is_empty() {
                        "-".to_string()
                    } else {
                        i.steps.join(", ")
                    }
                );
                if let Some(e) = &i.error {
                    println!("  error: {e}");
                }
            }
        }
    }
    Ok(())
}
