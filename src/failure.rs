//! The one failure type: every way a customization or a command can fail, each kind
//! knowing its exit status, the code vCenter gets in `deployPkg.update.state`, and the
//! text for `guestinfo.gc.status`. Every command and both boot stages end through it, so
//! the same fault gives the same exit status and the same status to the host wherever it
//! happens (`docs/vcenter.md`'s failure table is tested against [`FailureKind::ALL`]).

/// The code slot of `deployPkg.update.state`: an error (< 100) or an event (≥ 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Code {
    /// `GUESTCUST_ERROR_SUCCESS`.
    Success = 0,
    /// `GUESTCUST_ERROR_SCRIPT_DISABLED`: a custom script was refused by tools.conf.
    ScriptDisabled = 6,
    /// `GUESTCUST_ERROR_WRONG_META_FORMAT`: raw cloud-init metadata is not YAML/JSON.
    WrongMetaFormat = 9,
    /// `GUESTCUST_EVENT_CUSTOMIZE_FAILED`.
    CustomizeFailed = 100,
    /// `GUESTCUST_EVENT_NETWORK_SETUP_FAILED`.
    NetworkSetupFailed = 101,
    /// `GUESTCUST_EVENT_ENABLE_NICS`: ask the host to connect the NICs.
    EnableNics = 103,
    /// `GUESTCUST_EVENT_QUERY_NICS`: ask whether the NICs are connected.
    QueryNics = 104,
}

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: a failure other than those below (a script failed, an internal error).
pub(crate) const EXIT_FAILURE: u8 = 1;
/// Exit status: `status` found a degraded customization (cloud-init's "recoverable").
pub(crate) const EXIT_DEGRADED: u8 = 2;
/// Exit status: the command line was wrong (sysexits `EX_USAGE`).
pub(crate) const EXIT_USAGE: u8 = 64;
/// Exit status: the customization is invalid or cannot apply to this root (sysexits
/// `EX_DATAERR`). Nothing was changed.
pub(crate) const EXIT_INVALID: u8 = 65;
/// Exit status: reading or writing a file failed (sysexits `EX_IOERR`).
pub(crate) const EXIT_IO: u8 = 74;
/// Exit status: SIGTERM interrupted the stage (sysexits `EX_TEMPFAIL`); the next run
/// resumes.
pub(crate) const EXIT_INTERRUPTED: u8 = 75;

/// One exit status and what it means: vmcust(1)'s EXIT STATUS section and the user
/// guide's table are made from [`EXIT_STATUSES`] (tests/docs_generated.rs keeps the guide
/// equal to it), so the pages cannot disagree with each other or with the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitStatus {
    /// The code.
    pub code: u8,
    /// What it means, in plain text (no markup: it is written into roff and Markdown).
    pub meaning: &'static str,
}

/// Every exit status the commands use, in the order the pages list them.
pub static EXIT_STATUSES: &[ExitStatus] = &[
    ExitStatus {
        code: EXIT_OK,
        meaning: "Success.",
    },
    ExitStatus {
        code: EXIT_FAILURE,
        meaning: "Any other failure: a custom script that failed, tools.conf refusing scripts, \
                  user-data that cannot run, a host that does not answer. For status: a stage \
                  of this boot or the newest customization failed (an error stays until a \
                  later boot succeeds).",
    },
    ExitStatus {
        code: EXIT_DEGRADED,
        meaning: "For status: the boot is over, with no error and with something asked for \
                  and not done (problems in the settings file, a cloud-config key or value \
                  not applied, a new instance refused on this VM); never while a stage runs. \
                  For schema: the user-data would apply with something left out (a key \
                  vmcust does not implement, a value it cannot apply): the customization \
                  would end degraded.",
    },
    ExitStatus {
        code: EXIT_USAGE,
        meaning: "The command line is wrong, no customization source was given, or \
                  query --instance names no instance of this root.",
    },
    ExitStatus {
        code: EXIT_INVALID,
        meaning: "The customization is invalid (whatever its source: cust.cfg, OVF property, \
                  appliance mapping, seed, guestinfo metadata) or cannot apply to this root \
                  (an unknown time zone, a MAC address no device has). For schema: the \
                  user-data has an error (or, with [user-data] cloud_config_unknown = refuse, \
                  something vmcust does not apply). Nothing was changed; the message names the source, \
                  the line or key, and how to fix it.",
    },
    ExitStatus {
        code: EXIT_IO,
        meaning: "A file could not be read or written (a --root or --tarfile directory that \
                  does not exist). Every change already made was put back.",
    },
    ExitStatus {
        code: EXIT_INTERRUPTED,
        meaning: "run was interrupted (SIGTERM); the next run resumes where it stopped.",
    },
];

/// What went wrong, as the host and the exit status need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The command line lacks something clap cannot check.
    Usage,
    /// A spec, OVF environment, seed or guestinfo value is malformed or refused.
    InvalidSpec,
    /// The raw cloud-init metadata a spec names is not in the package.
    MetadataMissing,
    /// The raw cloud-init metadata is not valid YAML/JSON or not a mapping.
    MetadataFormat,
    /// The user-data file a spec names is not in the package.
    UserDataMissing,
    /// The network configuration cannot be planned for this root.
    NetworkInvalid,
    /// The customization does not fit this root (no shadow file, an unknown user, …).
    CannotApply,
    /// Raw cloud-init data arrived and the settings forbid it.
    RawDataDisabled,
    /// A custom script was refused by tools.conf.
    ScriptDisabled,
    /// The pre-customization script failed, timed out or was cut off.
    PreScriptFailed,
    /// The post-customization script failed, timed out or was cut off.
    PostScriptFailed,
    /// User-data failed, or could not be kept for the late stage.
    UserDataFailed,
    /// The marker file could not be written.
    MarkerFailed,
    /// Reading or writing the system failed (a full disk, an unreadable file).
    Io,
    /// Anything else (an internal error).
    Other,
}

impl FailureKind {
    /// Every kind, for the documentation test.
    pub const ALL: [FailureKind; 15] = [
        FailureKind::Usage,
        FailureKind::InvalidSpec,
        FailureKind::MetadataMissing,
        FailureKind::MetadataFormat,
        FailureKind::UserDataMissing,
        FailureKind::NetworkInvalid,
        FailureKind::CannotApply,
        FailureKind::RawDataDisabled,
        FailureKind::ScriptDisabled,
        FailureKind::PreScriptFailed,
        FailureKind::PostScriptFailed,
        FailureKind::UserDataFailed,
        FailureKind::MarkerFailed,
        FailureKind::Io,
        FailureKind::Other,
    ];

    /// The process exit status.
    pub fn exit_code(self) -> u8 {
        use FailureKind::*;
        match self {
            Usage => EXIT_USAGE,
            InvalidSpec | MetadataMissing | MetadataFormat | UserDataMissing | NetworkInvalid
            | CannotApply | RawDataDisabled => EXIT_INVALID,
            Io | MarkerFailed => EXIT_IO,
            // A script refused by the VM's own tools.conf: the spec is valid, the VM says no.
            ScriptDisabled | PreScriptFailed | PostScriptFailed | UserDataFailed | Other => {
                EXIT_FAILURE
            }
        }
    }

    /// The code sent to vCenter in `deployPkg.update.state`.
    pub fn code(self) -> Code {
        match self {
            FailureKind::MetadataFormat => Code::WrongMetaFormat,
            FailureKind::NetworkInvalid => Code::NetworkSetupFailed,
            FailureKind::ScriptDisabled => Code::ScriptDisabled,
            _ => Code::CustomizeFailed,
        }
    }

    /// The text for `guestinfo.gc.status` (VMware's own wording where it has one).
    pub fn gc_text(self) -> &'static str {
        use FailureKind::*;
        match self {
            Usage | InvalidSpec => "Error parsing the customization specification",
            MetadataMissing => "Error locating the cloud-init meta data file",
            MetadataFormat => "Error parsing the cloud-init meta data",
            UserDataMissing => "Error locating the cloud-init userdata file",
            NetworkInvalid => "Error preparing Network Configuration",
            RawDataDisabled => "Raw cloud-init data is not allowed",
            ScriptDisabled => "Custom script is disabled by VM Administrator",
            PreScriptFailed => "Error executing pre-customization script",
            PostScriptFailed => "Error executing post-customization script",
            UserDataFailed => "Error loading cloud-init userdata file",
            MarkerFailed => "Error creating marker files",
            CannotApply | Io | Other => "Error applying the customization",
        }
    }

    /// The kind's name in the docs' table.
    pub fn name(self) -> &'static str {
        use FailureKind::*;
        match self {
            Usage => "usage",
            InvalidSpec => "invalid-spec",
            MetadataMissing => "metadata-missing",
            MetadataFormat => "metadata-format",
            UserDataMissing => "user-data-missing",
            NetworkInvalid => "network-invalid",
            CannotApply => "cannot-apply",
            RawDataDisabled => "raw-data-disabled",
            ScriptDisabled => "script-disabled",
            PreScriptFailed => "pre-script-failed",
            PostScriptFailed => "post-script-failed",
            UserDataFailed => "user-data-failed",
            MarkerFailed => "marker-failed",
            Io => "io",
            Other => "other",
        }
    }
}

/// A failure: its kind and the reason for people (naming the source, the file, the line
/// and the key; never a secret's value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// Why, for people and for the host's `@message`.
    pub reason: String,
}

impl Failure {
    /// A failure of `kind`.
    pub fn new(kind: FailureKind, reason: impl Into<String>) -> Failure {
        Failure {
            kind,
            reason: reason.into(),
        }
    }

    /// The command line is wrong.
    pub fn usage(reason: impl Into<String>) -> Failure {
        Failure::new(FailureKind::Usage, reason)
    }

    /// The input is malformed or refused.
    pub fn invalid(reason: impl Into<String>) -> Failure {
        Failure::new(FailureKind::InvalidSpec, reason)
    }

    /// Reading or writing failed.
    pub fn io(reason: impl Into<String>) -> Failure {
        Failure::new(FailureKind::Io, reason)
    }

    /// Why it failed, for people.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The process exit status.
    pub fn exit_code(&self) -> u8 {
        self.kind.exit_code()
    }

    /// The input, not the system, is at fault (exit 65).
    pub fn is_invalid(&self) -> bool {
        self.kind.exit_code() == EXIT_INVALID
    }

    /// The failure an error chain stands for: a [`Failure`] in it, else the kind its
    /// cause implies (a reader's refusal is invalid input, an I/O error is I/O).
    pub fn of(e: &anyhow::Error) -> Failure {
        if let Some(f) = e.chain().find_map(|c| c.downcast_ref::<Failure>()) {
            return Failure::new(f.kind, format!("{e:#}"));
        }
        Failure::new(kind_of(e), format!("{e:#}"))
    }
}

impl From<crate::model::InvalidValue> for Failure {
    fn from(e: crate::model::InvalidValue) -> Self {
        Failure::invalid(e.to_string())
    }
}

impl From<crate::plan::PlanError> for Failure {
    fn from(e: crate::plan::PlanError) -> Self {
        let kind = match e {
            crate::plan::PlanError::Network(_) => FailureKind::NetworkInvalid,
            _ => FailureKind::CannotApply,
        };
        Failure::new(kind, e.to_string())
    }
}

/// The kind of an error that is not a [`Failure`]: the readers' own refusals are invalid
/// input, an I/O error anywhere in the chain is I/O, anything else is other.
fn kind_of(e: &anyhow::Error) -> FailureKind {
    let invalid = e.chain().any(|c| {
        c.is::<crate::plan::PlanError>()
            || c.is::<vmcust_imc::SpecError>()
            || c.is::<vmcust_imc::ReadError>()
            || c.is::<vmcust_ovf::EnvError>()
            || matches!(
                c.downcast_ref(),
                Some(vmcust_ovf::EnvReadError::TooLarge { .. })
            )
            || matches!(
                c.downcast_ref(),
                Some(vmcust_imc::CappedReadError::TooLarge { .. })
            )
            || c.downcast_ref::<vmcust_ovf::IsoError>()
                .is_some_and(|e| !e.is_unreadable())
    });
    if invalid {
        FailureKind::InvalidSpec
    } else if e.chain().any(|c| c.is::<std::io::Error>()) {
        FailureKind::Io
    } else {
        FailureKind::Other
    }
}

/// The exit status for an error chain.
pub(crate) fn exit_code(e: &anyhow::Error) -> u8 {
    if let Some(f) = e.chain().find_map(|c| c.downcast_ref::<Failure>()) {
        return f.exit_code();
    }
    kind_of(e).exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_distinct_name_and_a_status_text() {
        let mut names: Vec<&str> = FailureKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FailureKind::ALL.len());
        for k in FailureKind::ALL {
            assert!(
                k.gc_text().starts_with("Error")
                    || k.gc_text().contains("disabled")
                    || k.gc_text().contains("not allowed"),
                "{k:?}"
            );
        }
    }

    /// docs/vcenter.md's failure table lists every kind, in order, with its exit status,
    /// state code and gc.status text.
    #[test]
    fn the_docs_failure_table_follows_the_code() {
        let doc = include_str!("../docs/vcenter.md");
        let rows: Vec<Vec<String>> = doc
            .split("<!-- failures -->")
            .nth(1)
            .expect("docs/vcenter.md has a <!-- failures --> table")
            .lines()
            .skip(3) // the rest of the marker's line, the header, the rule
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
            .collect();
        assert_eq!(rows.len(), FailureKind::ALL.len());
        for (row, kind) in rows.iter().zip(FailureKind::ALL) {
            assert_eq!(row[1], format!("`{}`", kind.name()));
            assert_eq!(row[2], kind.exit_code().to_string(), "{kind:?}");
            assert_eq!(row[3], (kind.code() as u16).to_string(), "{kind:?}");
            assert_eq!(row[4], kind.gc_text(), "{kind:?}");
        }
    }

    #[test]
    fn a_failure_inside_an_error_chain_decides_the_exit_status() {
        let e = anyhow::Error::from(Failure::new(FailureKind::NetworkInvalid, "eth9"))
            .context("planning");
        assert_eq!(exit_code(&e), EXIT_INVALID);
        assert_eq!(Failure::of(&e).kind, FailureKind::NetworkInvalid);
        let io = anyhow::Error::from(std::io::Error::other("disk full")).context("writing");
        assert_eq!(exit_code(&io), EXIT_IO);
        assert_eq!(exit_code(&anyhow::anyhow!("bug")), EXIT_FAILURE);
    }
}
