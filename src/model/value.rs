//! Validated values: every string or address that reaches a file or a system call has one
//! of these types, and each can only be built by its `parse`, whichever source the value
//! came from (cust.cfg, OVF, guestinfo metadata, an appliance mapping, a seed).
//!
//! The checks are about what the value *is* (a host name, an address a NIC can hold), so a
//! writer downstream never has to guess whether a value could break its format.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::ops::Deref;

use base64::Engine as _;
use ipnet::{Ipv4Net, Ipv6Net};
use serde::Serialize;

pub(crate) use vmcust_imc::{DnsName, FileName, HostName, MacAddr, Secret, Timezone};

/// At most this many characters of a rejected value are quoted in a message.
const QUOTE_CHARS: usize = 40;

/// Marks of private key material, wherever they stand in a value: a PEM header of any
/// kind (`-----BEGIN OPENSSH PRIVATE KEY-----`, `RSA`, `EC`, `ENCRYPTED`, PGP's `PRIVATE
/// KEY BLOCK`), the base64 of OpenSSH's `openssh-key-v1` magic that starts its key blob,
/// and the lines of a PuTTY `.ppk` file.
const PRIVATE_KEY_MARKS: &[&str] = &[
    "b3BlbnNzaC1rZXktdjE",
    "PuTTY-User-Key-File",
    "Private-Lines:",
    "Private-MAC:",
];

/// Whether `text` holds something that looks like private key material: such a value is
/// never quoted, not even in part, in a message or a file (docs/security.md, "Secrets").
/// Besides the marks above, a run of 32 or more base64 characters mixing letters and
/// digits counts: that is what each line of a key's body (or a `.ppk`'s MAC in hex) is,
/// pasted alone (a public key's blob looks the same, and is not worth quoting either).
pub(crate) fn looks_like_private_key(text: &str) -> bool {
    PRIVATE_KEY_MARKS.iter().any(|m| text.contains(m))
        || text.to_ascii_uppercase().contains("PRIVATE KEY")
        || text
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')))
            .any(is_base64_run)
}

/// A run of 32+ base64 characters with letters and digits.
fn is_base64_run(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 32
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
        && b.iter().any(u8::is_ascii_alphabetic)
        && b.iter().any(u8::is_ascii_digit)
}

/// What a message says instead of a value that looks like private key material.
const NOT_SHOWN: &str = "(a value that looks like private key material, not shown)";

/// A rejected value for a message: a short, escaped prefix and its length, so a huge or
/// multi-line value never floods a log line. A value that looks like private key material
/// ([`looks_like_private_key`]) is not quoted at all.
pub(crate) fn quote(value: &str) -> String {
    if looks_like_private_key(value) {
        return NOT_SHOWN.to_string();
    }
    let count = value.chars().count();
    let head: String = value.chars().take(QUOTE_CHARS).collect();
    if count > QUOTE_CHARS {
        format!("{head:?}… ({count} characters)")
    } else {
        format!("{head:?}")
    }
}

/// A value that cannot be used, with the place it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct InvalidValue {
    /// Where: the source and the key path, e.g.
    /// `guestinfo.metadata: network.ethernets.id0.nameservers.search[1]`.
    pub place: String,
    /// What is wrong and what to write instead; never the value of a secret.
    pub reason: String,
}

impl InvalidValue {
    /// A problem at `place`.
    pub fn new(place: impl Into<String>, reason: impl Into<String>) -> Self {
        InvalidValue {
            place: place.into(),
            reason: reason.into(),
        }
    }
}

/// Fails on a control character (newline, tab, NUL, DEL…), which no value may carry into a
/// line-oriented file.
fn no_control(s: &str, what: &str) -> Result<(), String> {
    match s.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "{what} {} holds the control character {c:?}; remove it",
            quote(s)
        )),
        None => Ok(()),
    }
}

macro_rules! string_value {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, ::serde::Serialize)]
        #[serde(transparent)]
        // Public: the test API re-exports some of the types this macro makes.
        #[allow(unreachable_pub)]
        pub struct $name(String);

        impl $name {
            /// The value as given.
            #[allow(dead_code, unreachable_pub, reason = "not every value type is read back as text")]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ::std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}
/// For other modules' validated text types (the cloud-config accounts' names and
/// values): one shape for every such type.
pub(crate) use string_value;

string_value!(
    /// An instance id: any printable text up to 256 characters. It names a record
    /// directory through [`InstanceId::file_name`], which is different for different ids.
    InstanceId
);

impl<'de> serde::Deserialize<'de> for InstanceId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        InstanceId::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl InstanceId {
    /// Validates an instance id.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("empty instance id; give a non-empty id such as iid-web-01".into());
        }
        if s.chars().count() > 256 {
            return Err(format!(
                "instance id {} is longer than 256 characters",
                quote(s)
            ));
        }
        no_control(s, "instance id")?;
        Ok(InstanceId(s.to_owned()))
    }

    /// A file name for this id that no other id shares: letters, digits, `-`, `_` and `.`
    /// (not leading) stay as they are, every other byte becomes `%XX`. `i/1` is `i%2F1`,
    /// `i_1` stays `i_1`.
    pub fn file_name(&self) -> String {
        let mut out = String::with_capacity(self.0.len());
        for (i, b) in self.0.bytes().enumerate() {
            let keep = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0);
            if keep {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }
}

string_value!(
    /// One `authorized_keys` line: a key type, the key and an optional comment, or
    /// options before them. Never more than one line.
    SshKey
);

/// The key types OpenSSH's `sshd` accepts in `authorized_keys`, certificates included.
pub(crate) const SSH_KEY_TYPES: &[&str] = &[
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "ssh-dss",
    "ssh-ed25519-cert-v01@openssh.com",
    "ssh-rsa-cert-v01@openssh.com",
    "ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ecdsa-sha2-nistp384-cert-v01@openssh.com",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com",
    "sk-ssh-ed25519-cert-v01@openssh.com",
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ssh-dss-cert-v01@openssh.com",
];

impl SshKey {
    /// The lines of an `authorized_keys`-style text that hold keys, each trimmed, with its
    /// 1-based line number in `text`: blank lines and `#` comment lines are left out, as
    /// `sshd` and cloud-init leave them out. Every source reading a text of keys uses this.
    pub fn lines_of(text: &str) -> impl Iterator<Item = (usize, &str)> {
        text.lines()
            .map(str::trim)
            .enumerate()
            .filter(|(_, l)| !Self::is_not_a_key(l))
            .map(|(i, l)| (i + 1, l))
    }

    /// Whether one entry of a list of keys is blank or a `#` comment, to be left out.
    pub fn is_not_a_key(entry: &str) -> bool {
        let entry = entry.trim();
        entry.is_empty() || entry.starts_with('#')
    }

    /// Validates one public key line (at most 16 KiB, no control characters but tab) as `sshd`
    /// reads `authorized_keys`: optional options (`no-pty,from="10.0.0.0/8"`), a known key
    /// type, the key as base64 whose own leading type field is that type, and an optional
    /// comment. The error names the key by its type and comment, never by the whole line.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("empty ssh public key".into());
        }
        if s.len() > 16 * 1024 {
            return Err(format!(
                "ssh public key of {} bytes; a key line is at most 16 KiB",
                s.len()
            ));
        }
        // A tab separates fields as a blank does (sshd reads either); other control
        // characters have no place in a key line.
        no_control(&s.replace('\t', " "), "ssh public key")?;
        check_key_line(s)?;
        Ok(SshKey(s.to_owned()))
    }
}

/// The fields of a valid key line, as `sshd` (and cloud-init's `AuthKeyLineParser`) split
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyParts<'a> {
    /// The options before the type (`no-pty,from="10.0.0.0/8"`), if any.
    pub options: Option<&'a str>,
    /// The key type (`ssh-ed25519`).
    pub kind: &'a str,
    /// The key as base64.
    pub base64: &'a str,
    /// The comment after the key, empty when there is none.
    pub comment: &'a str,
}

impl SshKey {
    /// The line's options, type, base64 key and comment.
    pub fn parts(&self) -> KeyParts<'_> {
        let line = self.0.as_str();
        let (first, _) = split_word(line);
        let (options, rest) = if SSH_KEY_TYPES.contains(&first) {
            (None, line)
        } else {
            let after = skip_options(line).unwrap_or_default();
            (Some(&line[..line.len() - after.len()]), after.trim_start())
        };
        let (kind, rest) = split_word(rest);
        let (base64, comment) = split_word(rest.trim_start());
        KeyParts {
            options,
            kind,
            base64,
            comment: comment.trim(),
        }
    }

    /// The key's blob (the base64 decoded), checked by [`SshKey::parse`].
    pub fn blob(&self) -> Vec<u8> {
        KEY_BASE64.decode(self.parts().base64).unwrap_or_default()
    }
}

/// What a key line should look like, for messages.
const KEY_LINE_FORM: &str =
    "write the line of the .pub file, such as ssh-ed25519 AAAAC3Nz... user@host";

/// The checks of [`SshKey::parse`] on a trimmed line without control characters.
fn check_key_line(line: &str) -> Result<(), String> {
    if PRIVATE_KEY_MARKS.iter().any(|m| line.contains(m))
        || line.to_ascii_uppercase().contains("PRIVATE KEY")
    {
        return Err(format!(
            "not an ssh public key: a line of {} characters that looks like part of a \
             private key (not shown); never paste a private key, {KEY_LINE_FORM}",
            line.chars().count()
        ));
    }
    let (first, _) = split_word(line);
    let rest = if SSH_KEY_TYPES.contains(&first) {
        line
    } else {
        // Not a key type: options come first, or the type is misspelt.
        let after = skip_options(line).map(str::trim_start).unwrap_or_default();
        if !SSH_KEY_TYPES.contains(&split_word(after).0) {
            if looks_like_key_body(first) {
                // A line of a pasted private key (its PEM body is base64 lines): no part
                // of it is quoted.
                return Err(format!(
                    "not an ssh public key: a line of {} characters that looks like part of \
                     a key's body (not shown); never paste a private key, {KEY_LINE_FORM}",
                    line.chars().count()
                ));
            }
            let hint = vmcust_imc::closest(first, SSH_KEY_TYPES.iter().copied())
                .map_or(String::new(), |t| format!("did you mean {t}? "));
            return Err(format!(
                "ssh public key with the unknown key type {} ({}); {hint}{KEY_LINE_FORM}",
                quote(first),
                comment_of(line),
            ));
        }
        after
    };
    let (kind, rest) = split_word(rest);
    let (blob, comment) = split_word(rest.trim_start());
    let comment = comment.trim();
    let which = || {
        if comment.is_empty() {
            format!("{kind} key (no comment)")
        } else {
            format!("{kind} key {}", quote(comment))
        }
    };
    if blob.is_empty() {
        return Err(format!(
            "ssh public key: the {} has no key after its type; {KEY_LINE_FORM}",
            which()
        ));
    }
    let bytes = KEY_BASE64.decode(blob).map_err(|_| {
        format!(
            "ssh public key: the {} is not valid base64; copy the whole line from the .pub file again",
            which()
        )
    })?;
    super::ssh_blob::check(kind, &bytes).map_err(|problem| {
        let fix = match problem {
            super::ssh_blob::BlobProblem::OtherType(_) => "",
            _ => "; copy the whole line from the .pub file again",
        };
        format!("ssh public key: the {} {problem}{fix}", which())
    })
}

/// Whether the first word of a key line is a run of base64 too long for a key type (the
/// longest, `sk-ecdsa-sha2-nistp256-cert-v01@openssh.com`, has 43 characters and a `@`
/// and `-`s): a line of a key's body, public or private, pasted without its type.
fn looks_like_key_body(word: &str) -> bool {
    word.len() >= 24
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// Base64 as `ssh-keygen` writes it; missing padding is tolerated, as `sshd` does.
const KEY_BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// The first whitespace-separated word and the rest after it.
fn split_word(s: &str) -> (&str, &str) {
    s.split_once(char::is_whitespace).unwrap_or((s, ""))
}

/// The rest of `line` after an `authorized_keys` options field: up to the first blank
/// outside double quotes (`\"` inside quotes is a quote). `None` if a quote is not closed.
fn skip_options(line: &str) -> Option<&str> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return Some(&line[i..]),
            _ => {}
        }
    }
    None
}

/// The comment of a line whose type is unknown, for the message: its last word when there
/// are three or more, which is where `ssh-keygen` puts it.
fn comment_of(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        [_, _, .., last] if words.len() >= 3 => format!("comment {}", quote(last)),
        _ => "no comment".to_string(),
    }
}

string_value!(
    /// A login name as `useradd` accepts it by default: a letter or `_`, then letters,
    /// digits, `.`, `_`, `-`, an optional trailing `$`, at most 32 characters.
    UserName
);

impl UserName {
    /// Validates a user name.
    pub fn parse(s: &str) -> Result<Self, String> {
        let body = s.strip_suffix('$').unwrap_or(s);
        let ok = s.len() <= 32
            && body
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && body
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(UserName(s.to_owned()))
        } else {
            Err(format!(
                "invalid user name {}; use a login name of letters, digits, '_', '-' or '.' \
                 starting with a letter or '_' (at most 32 characters)",
                quote(s)
            ))
        }
    }
}

string_value!(
    /// A source's own name for an interface (`NIC1`, `id0`, `eth0`): letters, digits and
    /// `. _ - : @`, at most 64 characters. It appears in comments and connection names.
    InterfaceId
);

impl InterfaceId {
    /// Validates an interface id.
    pub fn parse(s: &str) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':' | b'@')
            });
        if ok {
            Ok(InterfaceId(s.to_owned()))
        } else {
            Err(format!(
                "interface name {} is not valid; use 1-64 letters, digits or . _ - : @",
                quote(s)
            ))
        }
    }
}

string_value!(
    /// Where an OVF `seedfrom` points: a `file://` URL or an absolute path (followed), or
    /// an `http(s)://` URL (recorded, never fetched at boot). No control characters, no
    /// `..` component.
    SeedLocation
);

impl SeedLocation {
    /// Validates a seed location.
    pub(crate) fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        no_control(s, "seedfrom")?;
        let local = s
            .strip_prefix("file://")
            .or_else(|| s.starts_with('/').then_some(s));
        let remote = s.starts_with("http://") || s.starts_with("https://");
        if !remote && local.is_none_or(|p| !p.starts_with('/')) {
            return Err(format!(
                "seedfrom {} is neither an absolute path, a file:/// url nor an http(s) url",
                quote(s)
            ));
        }
        if local.is_some_and(|p| p.split('/').any(|c| c == "..")) {
            return Err(format!("seedfrom {} has a .. component", quote(s)));
        }
        Ok(SeedLocation(s.to_owned()))
    }

    /// The local directory, for a `file://` URL or a path; `None` for a remote URL.
    pub(crate) fn local_dir(&self) -> Option<&str> {
        self.0
            .strip_prefix("file://")
            .or_else(|| self.0.starts_with('/').then_some(&self.0))
    }
}

/// Why an address cannot be a NIC's, a gateway or a name server, if it cannot.
fn unusable(a: IpAddr) -> Option<&'static str> {
    if a.is_unspecified() {
        Some("the unspecified address")
    } else if a.is_multicast() {
        Some("a multicast address")
    } else if a == IpAddr::V4(Ipv4Addr::BROADCAST) {
        Some("the broadcast address")
    } else {
        None
    }
}

/// An IPv4 address a NIC can hold, with its prefix length (1-32): not unspecified,
/// multicast, broadcast or loopback, and not the network or broadcast address of its
/// subnet (for prefixes up to /30).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct NicAddr4(Ipv4Net);

impl NicAddr4 {
    /// Validates an address with its prefix.
    pub fn new(net: Ipv4Net) -> Result<Self, String> {
        let a = net.addr();
        let why = unusable(IpAddr::V4(a))
            .or_else(|| a.is_loopback().then_some("a loopback address"))
            .or_else(|| (net.prefix_len() == 0).then_some("given with prefix length 0"))
            .or_else(|| {
                (net.prefix_len() <= 30 && a == net.network())
                    .then_some("the network address of its subnet")
            })
            .or_else(|| {
                (net.prefix_len() <= 30 && a == net.broadcast())
                    .then_some("the broadcast address of its subnet")
            });
        match why {
            Some(why) => Err(format!("{net} cannot be a NIC address: it is {why}")),
            None => Ok(NicAddr4(net)),
        }
    }
}

impl std::str::FromStr for NicAddr4 {
    type Err = String;

    /// `10.0.0.5/24`, validated.
    fn from_str(s: &str) -> Result<Self, String> {
        let net: Ipv4Net = s
            .parse()
            .map_err(|_| format!("{} is not an ipv4 address with a prefix", quote(s)))?;
        NicAddr4::new(net)
    }
}

impl Deref for NicAddr4 {
    type Target = Ipv4Net;
    fn deref(&self) -> &Ipv4Net {
        &self.0
    }
}

impl fmt::Display for NicAddr4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An IPv6 address a NIC can hold, with its prefix length (1-128): not unspecified,
/// multicast or loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct NicAddr6(Ipv6Net);

impl NicAddr6 {
    /// Validates an address with its prefix.
    pub fn new(net: Ipv6Net) -> Result<Self, String> {
        let a = net.addr();
        let why = unusable(IpAddr::V6(a))
            .or_else(|| a.is_loopback().then_some("the loopback address"))
            .or_else(|| (net.prefix_len() == 0).then_some("given with prefix length 0"));
        match why {
            Some(why) => Err(format!("{net} cannot be a NIC address: it is {why}")),
            None => Ok(NicAddr6(net)),
        }
    }
}

impl std::str::FromStr for NicAddr6 {
    type Err = String;

    /// `fd00::5/64`, validated.
    fn from_str(s: &str) -> Result<Self, String> {
        let net: Ipv6Net = s
            .parse()
            .map_err(|_| format!("{} is not an ipv6 address with a prefix", quote(s)))?;
        NicAddr6::new(net)
    }
}

impl Deref for NicAddr6 {
    type Target = Ipv6Net;
    fn deref(&self) -> &Ipv6Net {
        &self.0
    }
}

impl fmt::Display for NicAddr6 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A next hop: not unspecified, multicast, broadcast or loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Gateway(IpAddr);

impl Gateway {
    /// Validates a gateway address.
    pub fn new(a: IpAddr) -> Result<Self, String> {
        match unusable(a).or_else(|| a.is_loopback().then_some("a loopback address")) {
            Some(why) => Err(format!("{a} cannot be a gateway: it is {why}")),
            None => Ok(Gateway(a)),
        }
    }

    /// The address.
    pub fn addr(&self) -> IpAddr {
        self.0
    }
}

impl fmt::Display for Gateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A DNS server: not unspecified, multicast or broadcast (a loopback resolver such as
/// 127.0.0.53 is fine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct NameServer(IpAddr);

impl NameServer {
    /// Validates a name server address.
    pub fn new(a: IpAddr) -> Result<Self, String> {
        match unusable(a) {
            Some(why) => Err(format!("{a} cannot be a dns server: it is {why}")),
            None => Ok(NameServer(a)),
        }
    }

    /// The address.
    pub fn addr(&self) -> IpAddr {
        self.0
    }
}

impl fmt::Display for NameServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_never_share_a_file_name() {
        let ids = [
            "i/1",
            "i_1",
            "i%2F1",
            ".hidden",
            "%2Ehidden",
            "a b",
            "a%20b",
            "ok-1.2",
        ];
        let names: std::collections::BTreeSet<String> = ids
            .iter()
            .map(|s| InstanceId::parse(s).unwrap().file_name())
            .collect();
        assert_eq!(names.len(), ids.len(), "{names:?}");
        for n in &names {
            assert!(
                !n.contains('/') && !n.starts_with('.') && !n.is_empty(),
                "{n}"
            );
        }
        assert_eq!(InstanceId::parse("ok-1.2").unwrap().file_name(), "ok-1.2");
        assert!(InstanceId::parse("a\nb").is_err());
        assert!(InstanceId::parse(" ").is_err());
    }

    #[test]
    fn unusable_addresses_are_refused() {
        for s in [
            "0.0.0.0/24",
            "224.0.0.1/24",
            "255.255.255.255/32",
            "127.0.0.1/8",
            "10.0.0.0/24",
            "10.0.0.255/24",
            "10.0.0.5/0",
        ] {
            assert!(NicAddr4::new(s.parse().unwrap()).is_err(), "{s}");
        }
        for s in [
            "10.0.0.5/24",
            "10.0.0.0/31",
            "10.0.0.1/32",
            "192.168.0.255/23",
        ] {
            assert!(NicAddr4::new(s.parse().unwrap()).is_ok(), "{s}");
        }
        for s in ["::/64", "ff02::1/64", "::1/128", "fd00::1/0"] {
            assert!(NicAddr6::new(s.parse().unwrap()).is_err(), "{s}");
        }
        for s in [
            "0.0.0.0",
            "127.0.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
        ] {
            assert!(Gateway::new(s.parse().unwrap()).is_err(), "{s}");
        }
        assert!(NameServer::new("127.0.0.53".parse().unwrap()).is_ok());
        assert!(NameServer::new("0.0.0.0".parse().unwrap()).is_err());
    }

    #[test]
    fn names_and_keys() {
        assert!(UserName::parse("ubuntu").is_ok());
        for bad in ["", "-x", "a b", "a\nb", "..", &"a".repeat(33)] {
            assert!(UserName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(InterfaceId::parse("NIC1").is_ok());
        assert!(InterfaceId::parse("a\"b").is_err());
        assert!(SeedLocation::parse("file:///seed/").unwrap().local_dir() == Some("/seed/"));
        assert!(SeedLocation::parse("http://h/seed/")
            .unwrap()
            .local_dir()
            .is_none());
        for bad in ["seed", "file://rel", "/a/../b", "/a\nb"] {
            assert!(SeedLocation::parse(bad).is_err(), "{bad}");
        }
    }

    /// A key blob as `ssh-keygen` writes it: SSH wire strings, base64.
    fn blob(parts: &[&[u8]]) -> String {
        let mut out = Vec::new();
        for p in parts {
            out.extend_from_slice(&(p.len() as u32).to_be_bytes());
            out.extend_from_slice(p);
        }
        base64::engine::general_purpose::STANDARD.encode(out)
    }

    #[test]
    fn ssh_keys_are_checked_at_the_door() {
        let ed = blob(&[b"ssh-ed25519", &[7; 32]]);
        let rsa = blob(&[b"ssh-rsa", &[1, 0, 1], &[9; 257]]);
        let ok = [
            format!("ssh-ed25519 {ed} alice@laptop"),
            format!("ssh-ed25519 {ed}"),
            format!("ssh-rsa {rsa} ops team key"),
            format!("  ssh-ed25519 {ed} padded  "),
            format!("ssh-ed25519 {} unpadded", ed.trim_end_matches('=')),
            format!("no-pty,from=\"10.0.0.0/8\" ssh-ed25519 {ed} bob"),
            format!("command=\"echo a \\\"b c\\\"\",no-pty ssh-ed25519 {ed} quoted"),
            // sshd reads a tab between fields as a blank.
            format!("ssh-ed25519\t{ed}\ttabbed"),
        ];
        for line in &ok {
            assert!(
                SshKey::parse(line).is_ok(),
                "{line}: {:?}",
                SshKey::parse(line)
            );
        }
        // (line, words the message must hold)
        let bad: Vec<(String, &[&str])> = vec![
            ("".into(), &["empty"]),
            (
                "ssh-ed25519".into(),
                &["ssh-ed25519 key (no comment)", "no key"],
            ),
            (
                format!("ssh-ed2551 {ed} alice@x"),
                &[
                    "unknown key type \"ssh-ed2551\"",
                    "did you mean ssh-ed25519?",
                    "comment \"alice@x\"",
                ],
            ),
            (format!("rsa {rsa} ops"), &["unknown key type \"rsa\""]),
            (
                "ssh-ed25519 AAAA user@h".into(),
                &["ssh-ed25519 key \"user@h\"", "cut short"],
            ),
            (
                "ssh-ed25519 not*base64 user@h".into(),
                &["ssh-ed25519 key \"user@h\"", "not valid base64"],
            ),
            (
                format!("ssh-ed25519 {}! user@h", &ed[..20]),
                &["not valid base64"],
            ),
            (
                format!("ssh-rsa {ed} mixed@up"),
                &[
                    "ssh-rsa key \"mixed@up\"",
                    "holds a key of type \"ssh-ed25519\"",
                ],
            ),
            (
                format!("no-pty,command=\"x ssh-ed25519 {ed} open-quote"),
                &["unknown key type"],
            ),
            (
                format!("ssh-ed25519 {ed}\nssh-rsa {rsa}"),
                &["control character"],
            ),
        ];
        for (line, words) in &bad {
            let e = SshKey::parse(line).unwrap_err();
            for w in *words {
                assert!(e.contains(w), "{line:?}: {w:?} not in {e:?}");
            }
            // The key itself is never quoted whole in a message.
            assert!(!e.contains(&ed[..30]) && !e.contains(&rsa[..30]), "{e}");
        }
    }

    #[test]
    fn comment_and_blank_lines_are_not_keys() {
        let text = "# ops team\n  ssh-ed25519 AAAA a@x \n\n   # indented comment\r\nssh-rsa B\n";
        let lines: Vec<_> = SshKey::lines_of(text).collect();
        assert_eq!(lines, [(2, "ssh-ed25519 AAAA a@x"), (5, "ssh-rsa B")]);
        for skipped in ["", "  ", "#", "# ops team", "  #x"] {
            assert!(SshKey::is_not_a_key(skipped), "{skipped:?}");
        }
        assert!(!SshKey::is_not_a_key("ssh-rsa B # not a comment line"));
    }

    /// The keys `ssh-keygen` makes are accepted, and the ones it cannot read are refused.
    #[test]
    fn ssh_keygen_agrees() {
        // A missing tool fails the test and names its package (docs/testing.md).
        if let Err(e) = std::process::Command::new("ssh-keygen").arg("-?").output() {
            panic!("ssh-keygen cannot run ({e}); install the Debian package openssh-client");
        }
        let dir = tempfile::tempdir().unwrap();
        for kind in ["ed25519", "rsa", "ecdsa"] {
            let key = dir.path().join(kind);
            let made = std::process::Command::new("ssh-keygen")
                .args(["-q", "-t", kind, "-N", "", "-C", "made@test", "-f"])
                .arg(&key)
                .status()
                .unwrap();
            assert!(made.success());
            let line = std::fs::read_to_string(key.with_extension("pub")).unwrap();
            assert!(SshKey::parse(&line).is_ok(), "{line}");
            // One character of the blob changed: ssh-keygen refuses it, so must we.
            let (kind_word, rest) = line.split_once(' ').unwrap();
            let broken = format!("{kind_word} {}", rest.replacen('A', "*", 1));
            let file = dir.path().join("broken.pub");
            std::fs::write(&file, &broken).unwrap();
            let keygen = std::process::Command::new("ssh-keygen")
                .arg("-l")
                .arg("-f")
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                !keygen.status.success() && SshKey::parse(&broken).is_err(),
                "{broken}"
            );
        }
    }

    #[test]
    fn quotes_are_short() {
        let long = "x".repeat(1 << 20);
        let q = quote(&long);
        assert!(q.len() < 80 && q.contains("1048576 characters"), "{q}");
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
    }
}
