//! `vmcust schema FILE`: checks user-data offline, as `cloud-init schema -c FILE` does:
//! every part, every key's type, unknown keys with a did-you-mean. Each problem is one
//! line, `FILE:LINE: key.path: message`. Exit 65 when the document would be refused (an
//! error; or, with `[user-data] cloud_config_unknown = refuse`, anything vmcust does not
//! apply), 2 when it would apply with something left out (the customization would end
//! degraded, as `vmcust status` then says with its 2), 0 otherwise.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;

use super::Format;
use crate::cloud_config::jinja::Vars;
use crate::cloud_config::parts::MAX_USERDATA;
use crate::cloud_config::userdata::{self, ParsedUserData, VENDOR_PART};
use crate::cloud_config::{Problem, Severity};
use crate::failure::{Failure, EXIT_DEGRADED, EXIT_OK};
use crate::settings::CloudConfigUnknown;

/// Check user-data (cloud-config, scripts, MIME multipart) offline.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// The user-data file (`#cloud-config`, a script, MIME multipart, or gzip of one).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Vendor-data to merge under it, as a boot would.
    #[arg(long, value_name = "FILE")]
    pub vendor_data: Option<PathBuf>,
    /// Instance data to render a `## template: jinja` part with (an
    /// `instance-data-sensitive.json`, or the output of `cloud-init query --all`);
    /// without it a plain variable renders as `CI_MISSING_JINJA_VAR/<name>` and a key of
    /// a missing one (`{{ ds.meta_data.hostname }}`) is an error.
    #[arg(long, value_name = "FILE")]
    pub instance_data: Option<PathBuf>,
    /// Output format: the problems as lines, or the whole reading as JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The root whose settings file (`[user-data] cloud_config_unknown`) says whether
    /// what vmcust does not apply refuses the document or ends it degraded.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
}

fn read_capped(path: &Path) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    std::fs::File::open(path)
        .with_context(|| format!("opening {}", path.display()))?
        .take(MAX_USERDATA as u64 + 1)
        .read_to_end(&mut out)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(out)
}

/// `FILE:LINE: path: message`, the line counted in the file when the part's lines are
/// the file's, else within the part.
fn line_of(u: &ParsedUserData, p: &Problem, user: &Path, vendor: Option<&Path>) -> String {
    let file = if p.part >= VENDOR_PART {
        vendor.unwrap_or(user)
    } else {
        user
    };
    let info = u.parts.iter().find(|i| i.part == p.part);
    let place = match info.and_then(|i| i.first_line) {
        Some(first) => format!("{}:{}", file.display(), first + p.line.max(1) - 1),
        None => format!(
            "{} (part {}):{}",
            file.display(),
            p.part % VENDOR_PART + 1,
            p.line
        ),
    };
    let kind = match p.severity {
        Severity::Warning => "warning: ",
        Severity::Unknown | Severity::Error => "",
    };
    if p.path.is_empty() {
        format!("{place}: {kind}{}", p.message)
    } else {
        format!("{place}: {}: {kind}{}", p.path, p.message)
    }
}

/// Runs `vmcust schema`: `Ok` with 0 (valid) or 2 (it would apply, degraded).
pub(super) fn run(args: SchemaArgs) -> Result<u8> {
    let root = crate::root::Root::new(&args.root)
        .map_err(|e| Failure::usage(format!("--root {}: {e}", args.root.display())))?;
    let (settings, _) = crate::settings::load(&root);
    let user = read_capped(&args.file)?;
    let vendor = args.vendor_data.as_deref().map(read_capped).transpose()?;
    let vars = match &args.instance_data {
        Some(path) => {
            let bytes = read_capped(path)?;
            let tree: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
                Failure::invalid(format!("{}: not JSON instance data: {e}", path.display()))
            })?;
            Vars::new(&tree)
        }
        None => Vars::empty(),
    };
    let read = userdata::read_rendered(&user, vendor.as_deref(), &vars).map_err(|e| {
        let file = if e.which == "vendor-data" {
            args.vendor_data.as_deref().unwrap_or(&args.file)
        } else {
            &args.file
        };
        Failure::invalid(format!("{}: {}", file.display(), e.err))
    })?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&read)?),
        Format::Yaml => print!("{}", crate::yaml::to_string(&read)?),
        Format::Text => {
            // In file order: user-data's parts, then vendor-data's, each by line.
            let mut sorted: Vec<&Problem> = read.problems.iter().collect();
            sorted.sort_by_key(|p| (p.part, p.line));
            for p in sorted {
                println!(
                    "{}",
                    line_of(&read, p, &args.file, args.vendor_data.as_deref())
                );
            }
        }
    }
    let count = |s: Severity| read.problems.iter().filter(|p| p.severity == s).count();
    let (errors, unknown) = (count(Severity::Error), count(Severity::Unknown));
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let refuse = settings.cloud_config_unknown == CloudConfigUnknown::Refuse;
    if errors > 0 || (unknown > 0 && refuse) {
        let why = if errors > 0 {
            format!("{errors} error{}", plural(errors))
        } else {
            format!(
                "{unknown} thing{} vmcust does not apply, and [user-data] cloud_config_unknown = refuse",
                plural(unknown)
            )
        };
        return Err(Failure::invalid(format!(
            "{}: refused: {why} (nothing would be applied)",
            args.file.display()
        ))
        .into());
    }
    if unknown > 0 {
        eprintln!(
            "{}: {unknown} thing{} not applied (the rest would be; the customization would end degraded)",
            args.file.display(),
            plural(unknown)
        );
        return Ok(EXIT_DEGRADED);
    }
    if args.format == Format::Text {
        println!(
            "{}: valid ({} part{})",
            args.file.display(),
            read.parts.len(),
            if read.parts.len() == 1 { "" } else { "s" }
        );
    }
    Ok(EXIT_OK)
}
