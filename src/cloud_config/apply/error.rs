//! Why a cloud-config module cannot be planned or run on this root: each error names the
//! key (and entry) and says how to fix it.

use crate::plan::PlanError;

/// Why a module failed before (or instead of) changing anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ModuleError {
    /// A `write_files` owner names a user the root does not have.
    #[error(
        "write_files[{index}] ({path}): the owner {user:?} does not exist in the root's \
         /etc/passwd; create the user (users:) or write an existing owner such as root:root"
    )]
    NoSuchUser {
        /// The entry's index.
        index: usize,
        /// Its path.
        path: String,
        /// The user.
        user: String,
    },
    /// A `write_files` owner names a group the root does not have.
    #[error(
        "write_files[{index}] ({path}): the group {group:?} does not exist in the root's \
         /etc/group; create the group (groups:) or write an existing one such as root"
    )]
    NoSuchGroup {
        /// The entry's index.
        index: usize,
        /// Its path.
        path: String,
        /// The group.
        group: String,
    },
    /// `append: true` on a file that exists but is not a regular file.
    #[error(
        "write_files[{index}] ({path}): append needs a regular file, and something else is \
         there; remove append or the path"
    )]
    NotAFile {
        /// The entry's index.
        index: usize,
        /// Its path.
        path: String,
    },
    /// The engine's identity planner refused (a time zone the root lacks).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// `ntp` asks for a client the root does not have (cloud-init would install it).
    #[error(
        "ntp: no NTP client ({wanted}) is installed in the root; install chrony or \
         systemd-timesyncd in the template, or list it under packages and set ntp_client"
    )]
    NoNtpClient {
        /// What was looked for.
        wanted: String,
    },
    /// `ntp.ntp_client` names a client vmcust does not configure.
    #[error("ntp.ntp_client: {0} is not configured by vmcust; write auto, chrony, systemd-timesyncd or ntp")]
    NtpClientNotSupported(String),
    /// `ntp.peers` or `ntp.allow` for a client whose configuration has no such thing.
    #[error(
        "ntp.{option}: {client} cannot be configured with {option}; install chrony in the \
         template (ntp_client: chrony) or remove {option}"
    )]
    NtpOptionNotSupported {
        /// `peers` or `allow`.
        option: &'static str,
        /// The client chosen.
        client: &'static str,
    },
    /// `ca_certs` on a root with neither Debian's nor RHEL's certificate tool.
    #[error(
        "ca_certs: the root has neither update-ca-certificates (Debian) nor update-ca-trust \
         (RHEL); install ca-certificates in the template"
    )]
    NoCertTool,
}
