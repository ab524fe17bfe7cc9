//! User-data bytes into an ordered list of parts, the way cloud-init's `user_data.py`
//! splits them: gzip first (by its magic bytes), then MIME multipart when
//! `mime-version:` is in the first 4096 bytes, else one part typed by how it starts
//! (`#cloud-config`, `#!`, `#cloud-boothook`, longest prefix first, case ignored).
//!
//! MIME is read with the `mailparse` crate (RFC 2045/2046 bodies, base64 and
//! quoted-printable transfer encodings, nested multiparts with its own recursion limit);
//! the bounds below are checked before and after it.
//!
//! A `## template: jinja` part (or a `text/jinja2` one) is rendered with the instance
//! data ([`super::jinja`]) and the result typed again by its first line: a cloud-config,
//! a script or a boothook, as cloud-init's Jinja handler hands it on.
//!
//! Refused, the whole user-data with them (nothing is half-applied): `#include` and the
//! include-URL types (nothing at boot goes to the network), `#part-handler` (Python code
//! run by cloud-init), a Jinja template that cannot be rendered, `#cloud-config-archive`
//! and `#cloud-config-jsonp` (not implemented), and anything no handler takes.

use std::fmt;

use serde::Serialize;
use zeroize::Zeroizing;

use super::decode::{gunzip, is_gzip, GzipError};
use super::jinja::{self, JinjaError, Vars};
use super::modules::Frequency;
use crate::model::quote;

/// Largest user-data taken, raw and after decompression.
pub(crate) const MAX_USERDATA: usize = 16 * 1024 * 1024;
/// Most parts (leaves) in a MIME message.
pub(crate) const MAX_PARTS: usize = 256;
/// Deepest nesting of multiparts inside multiparts.
pub(crate) const MAX_MIME_DEPTH: usize = 8;
/// Most lines starting with `--` (boundary candidates) read before MIME parsing, so a
/// message of millions of empty parts is refused before it is split.
pub(crate) const MAX_BOUNDARY_LINES: usize = 4096;

/// cloud-init looks for `mime-version:` in this many leading bytes.
const MIME_SNIFF: usize = 4096;

/// What a part is, by its content type or its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type", content = "frequency")]
pub enum PartKind {
    /// `#cloud-config`, `text/cloud-config`: a cloud-config document.
    CloudConfig,
    /// `#!`, `text/x-shellscript`: run once per instance by cloud-init's `scripts_user`.
    Script,
    /// `text/x-shellscript-per-boot` / `-per-instance` / `-per-once` (cloud-init 22.1):
    /// run by `scripts_per_boot` / `_per_instance` / `_per_once`.
    ScriptPer(Frequency),
    /// `#cloud-boothook`, `text/cloud-boothook`: run early on every boot.
    Boothook,
}

impl PartKind {
    /// The content type cloud-init's handlers take it by.
    pub fn content_type(self) -> &'static str {
        match self {
            PartKind::CloudConfig => "text/cloud-config",
            PartKind::Script => "text/x-shellscript",
            PartKind::ScriptPer(Frequency::PerBoot) => "text/x-shellscript-per-boot",
            PartKind::ScriptPer(Frequency::PerOnce) => "text/x-shellscript-per-once",
            PartKind::ScriptPer(_) => "text/x-shellscript-per-instance",
            PartKind::Boothook => "text/cloud-boothook",
        }
    }
}

/// One part of the user-data, in the order cloud-init would hand it to its handler.
#[derive(Clone, PartialEq, Eq)]
pub struct Part {
    /// Its position among the parts, 0-based.
    pub index: usize,
    /// Its position among all the leaves of its input, blank ones included, 1-based:
    /// cloud-init numbers every part it attaches, and names an unnamed one `part-NNN` by
    /// this number.
    pub leaf: usize,
    /// What it is.
    pub kind: PartKind,
    /// Its file name (`Content-Disposition` `filename`, or the type's `name`), as given.
    pub filename: Option<String>,
    /// Its `Merge-Type` (or `X-Merge-Type`) header, for a cloud-config part.
    pub merge_type: Option<String>,
    /// The line of the whole user-data its body starts on (1-based), when its lines are
    /// the file's lines (not base64, not quoted-printable).
    pub first_line: Option<u32>,
    /// Its decoded bytes (scripts may carry secrets: wiped on drop, never printed); for a
    /// Jinja template, the rendered text.
    pub body: Zeroizing<Vec<u8>>,
    /// For a part rendered from a Jinja template: the variables it used that are not
    /// defined (printed as `CI_MISSING_JINJA_VAR/<name>`).
    pub template: Option<Vec<String>>,
}

impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Part")
            .field("index", &self.index)
            .field("leaf", &self.leaf)
            .field("kind", &self.kind)
            .field("filename", &self.filename)
            .field("merge_type", &self.merge_type)
            .field("first_line", &self.first_line)
            .field("template", &self.template)
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish()
    }
}

/// Why user-data cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartsError {
    /// Over [`MAX_USERDATA`].
    #[error("user-data is {size} bytes; at most {MAX_USERDATA} are taken")]
    TooLarge {
        /// Its size.
        size: usize,
    },
    /// gzip magic but a bad stream, or a bomb.
    #[error("user-data{} is gzip-compressed but {err}", at(*.part))]
    Gzip {
        /// The part, if inside MIME.
        part: Option<usize>,
        /// What went wrong.
        err: GzipError,
    },
    /// MIME that cannot be split.
    #[error(
        "user-data is MIME but cannot be read: {0}; write it with `cloud-init devel make-mime`"
    )]
    Mime(String),
    /// Too many parts or boundaries.
    #[error("user-data has more than {0}; merge the cloud-config parts into one")]
    TooMany(String),
    /// Multiparts nested too deep.
    #[error("user-data nests multiparts deeper than {MAX_MIME_DEPTH} levels")]
    TooDeep,
    /// A kind of part refused on purpose.
    #[error("user-data{}: {what} is not supported: {why}", at(Some(*.part)))]
    Refused {
        /// The part.
        part: usize,
        /// What it is (`#include`, `text/jinja2`…).
        what: String,
        /// Why and what to do instead.
        why: &'static str,
    },
    /// A Jinja template that cannot be rendered.
    #[error("user-data{}: {err}", at(Some(*.part)))]
    Jinja {
        /// The part.
        part: usize,
        /// Why.
        err: JinjaError,
    },
    /// A rendered Jinja template no handler takes.
    #[error("user-data{}: the rendered Jinja template starts with {first}; cloud-init hands a rendered template only to the `#cloud-config`, `#!` and `#cloud-boothook` handlers", at(Some(*.part)))]
    Rendered {
        /// The part.
        part: usize,
        /// Its first line.
        first: String,
    },
    /// A part no handler takes.
    #[error("user-data{}: {what}; user-data starts with `#cloud-config`, `#!` or `#cloud-boothook`, or is MIME multipart", at(Some(*.part)))]
    Unrecognised {
        /// The part.
        part: usize,
        /// What was found.
        what: String,
    },
}

fn at(part: Option<usize>) -> String {
    part.map_or(String::new(), |p| format!(" part {}", p + 1))
}

/// Why each refused kind is refused (also the text of docs/cloud-config.md).
const NO_NETWORK: &str =
    "nothing at boot is fetched from the network; put the content into the user-data itself";
const NO_HANDLER: &str =
    "a part handler is Python code cloud-init loads; vmcust runs no plug-ins: use a script part";
const NO_ARCHIVE: &str = "send the parts as MIME multipart instead (`cloud-init devel make-mime`)";
const NO_JSONP: &str =
    "JSON patches of cloud-config are not applied; send a cloud-config part with the merged keys";

/// The first-line prefixes cloud-init knows (`handlers.INCLUSION_TYPES_MAP`), longest
/// first so `#cloud-config-archive` wins over `#cloud-config`, with the content type each
/// stands for.
const PREFIXES: &[(&str, &str)] = &[
    ("## template: jinja", "text/jinja2"),
    ("#cloud-config-archive", "text/cloud-config-archive"),
    ("#cloud-config-jsonp", "text/cloud-config-jsonp"),
    ("#cloud-boothook", "text/cloud-boothook"),
    ("#include-once", "text/x-include-once-url"),
    ("#part-handler", "text/part-handler"),
    ("#cloud-config", "text/cloud-config"),
    ("#include", "text/x-include-url"),
    ("#!", "text/x-shellscript"),
];

/// gzip content types cloud-init decompresses (`user_data.DECOMP_TYPES`).
const GZIP_TYPES: &[&str] = &[
    "application/gzip",
    "application/gzip-compressed",
    "application/gzipped",
    "application/x-compress",
    "application/x-compressed",
    "application/x-gunzip",
    "application/x-gzip",
    "application/x-gzip-compressed",
];

/// The content type a payload's first line stands for, as `type_from_starts_with`.
fn type_from_start(body: &[u8]) -> Option<&'static str> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = &body[start..body.len().min(start + 32)];
    let head = head.to_ascii_lowercase();
    PREFIXES
        .iter()
        .find(|(p, _)| head.starts_with(p.as_bytes()))
        .map(|(_, t)| *t)
}

/// Splits user-data into its parts, Jinja templates rendered with `vars`. Empty or blank
/// user-data has none.
pub fn read(data: &[u8], vars: &Vars) -> Result<Vec<Part>, PartsError> {
    if data.len() > MAX_USERDATA {
        return Err(PartsError::TooLarge { size: data.len() });
    }
    let owned;
    let data: &[u8] = if is_gzip(data) {
        owned = Zeroizing::new(
            gunzip(data, MAX_USERDATA).map_err(|err| PartsError::Gzip { part: None, err })?,
        );
        &owned
    } else {
        data
    };
    let head = &data[..data.len().min(MIME_SNIFF)];
    let mut out = Vec::new();
    let mut leaves = 0;
    if head
        .to_ascii_lowercase()
        .windows(13)
        .any(|w| w == b"mime-version:")
    {
        mime(data, &mut out, &mut leaves, vars)?;
    } else {
        leaf(
            &mut out,
            &mut leaves,
            "text/x-not-multipart",
            data.to_vec(),
            (None, None),
            Some(1),
            vars,
        )?;
    }
    Ok(out)
}

/// One leaf: its type settled (gzip opened, `text/plain` guessed from its start) and
/// checked.
fn leaf(
    out: &mut Vec<Part>,
    leaves: &mut usize,
    ctype: &str,
    body: Vec<u8>,
    (filename, merge_type): (Option<String>, Option<String>),
    first_line: Option<u32>,
    vars: &Vars,
) -> Result<(), PartsError> {
    let index = out.len();
    *leaves += 1;
    let mut body = Zeroizing::new(body);
    let mut ctype = ctype.to_ascii_lowercase();
    let mut first_line = first_line;
    if GZIP_TYPES.contains(&ctype.as_str()) {
        body = Zeroizing::new(gunzip(&body, MAX_USERDATA).map_err(|err| PartsError::Gzip {
            part: Some(index),
            err,
        })?);
        ctype = "text/plain".into();
        first_line = None;
    }
    // cloud-init guesses text/plain from the start, and checks text/x-shellscript too
    // (some tools label cloud-config as a shell script).
    if matches!(
        ctype.as_str(),
        "text/plain" | "text/x-not-multipart" | "text/x-shellscript"
    ) {
        if let Some(t) = type_from_start(&body) {
            ctype = t.into();
        }
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        // Nothing to run or merge: cloud-init skips it too (an empty cloud-config part
        // is "empty cloud config", ignored).
        return Ok(());
    }
    let mut template = None;
    if ctype == "text/jinja2" {
        let text = std::str::from_utf8(&body).map_err(|_| PartsError::Jinja {
            part: index,
            err: JinjaError::Render {
                line: 1,
                reason: "the template is not UTF-8 text".into(),
            },
        })?;
        let rendered =
            jinja::render(text, vars).map_err(|err| PartsError::Jinja { part: index, err })?;
        ctype = match type_from_start(rendered.text.as_bytes()) {
            Some(t @ ("text/cloud-config" | "text/x-shellscript" | "text/cloud-boothook")) => {
                t.to_string()
            }
            _ => {
                let first = rendered
                    .text
                    .trim_start()
                    .lines()
                    .next()
                    .unwrap_or_default();
                return Err(PartsError::Rendered {
                    part: index,
                    first: quote(&first.chars().take(60).collect::<String>()),
                });
            }
        };
        body = Zeroizing::new(rendered.text.into_bytes());
        // Lines of the rendered text are no longer the input's.
        first_line = None;
        template = Some(rendered.missing);
    }
    let refuse = |what: &str, why| PartsError::Refused {
        part: index,
        what: what.to_string(),
        why,
    };
    let kind = match ctype.as_str() {
        "text/cloud-config" => PartKind::CloudConfig,
        "text/x-shellscript" => {
            if type_from_start(&body) != Some("text/x-shellscript") {
                return Err(PartsError::Unrecognised {
                    part: index,
                    what: "a text/x-shellscript part that does not start with `#!`".into(),
                });
            }
            PartKind::Script
        }
        "text/x-shellscript-per-boot" => PartKind::ScriptPer(Frequency::PerBoot),
        "text/x-shellscript-per-instance" => PartKind::ScriptPer(Frequency::PerInstance),
        "text/x-shellscript-per-once" => PartKind::ScriptPer(Frequency::PerOnce),
        "text/cloud-boothook" => PartKind::Boothook,
        "text/x-include-url" => return Err(refuse("#include (text/x-include-url)", NO_NETWORK)),
        "text/x-include-once-url" => {
            return Err(refuse(
                "#include-once (text/x-include-once-url)",
                NO_NETWORK,
            ))
        }
        "text/part-handler" => return Err(refuse("#part-handler", NO_HANDLER)),
        "text/cloud-config-archive" => return Err(refuse("#cloud-config-archive", NO_ARCHIVE)),
        "text/cloud-config-jsonp" => return Err(refuse("#cloud-config-jsonp", NO_JSONP)),
        "text/plain" | "text/x-not-multipart" => {
            let line = String::from_utf8_lossy(&body[..body.len().min(200)])
                .trim_start()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            return Err(PartsError::Unrecognised {
                part: index,
                what: format!("it starts with {}, which no handler takes", quote(&line)),
            });
        }
        other => {
            return Err(PartsError::Unrecognised {
                part: index,
                what: format!("the content type {}, which no handler takes", quote(other)),
            })
        }
    };
    if out.len() >= MAX_PARTS {
        return Err(PartsError::TooMany(format!("{MAX_PARTS} parts")));
    }
    out.push(Part {
        index,
        leaf: *leaves,
        kind,
        filename,
        merge_type,
        first_line,
        body,
        template,
    });
    Ok(())
}

/// Splits a MIME message, depth first, as Python's `Message.walk()` orders the leaves.
fn mime(
    data: &[u8],
    out: &mut Vec<Part>,
    leaves: &mut usize,
    vars: &Vars,
) -> Result<(), PartsError> {
    let boundaries = data
        .split(|b| *b == b'\n')
        .filter(|l| l.starts_with(b"--"))
        .count();
    if boundaries > MAX_BOUNDARY_LINES {
        return Err(PartsError::TooMany(format!(
            "{MAX_BOUNDARY_LINES} lines starting with `--`"
        )));
    }
    let mail = mailparse::parse_mail(data).map_err(|e| PartsError::Mime(e.to_string()))?;
    walk(data, &mail, 0, out, leaves, vars)
}

fn walk(
    whole: &[u8],
    mail: &mailparse::ParsedMail<'_>,
    depth: usize,
    out: &mut Vec<Part>,
    leaves: &mut usize,
    vars: &Vars,
) -> Result<(), PartsError> {
    use mailparse::MailHeaderMap as _;
    if depth > MAX_MIME_DEPTH {
        return Err(PartsError::TooDeep);
    }
    if mail.ctype.mimetype.starts_with("multipart/") {
        if !mail.ctype.params.contains_key("boundary") {
            return Err(PartsError::Mime(format!(
                "a {} part has no boundary parameter",
                mail.ctype.mimetype
            )));
        }
        for sub in &mail.subparts {
            walk(whole, sub, depth + 1, out, leaves, vars)?;
        }
        return Ok(());
    }
    let mut body = mail
        .get_body_raw()
        .map_err(|e| PartsError::Mime(format!("part {}: {e}", out.len() + 1)))?;
    if let mailparse::body::Body::QuotedPrintable(b) = mail.get_body_encoded() {
        // The decoder ends lines with CRLF; Python's keeps the message's own line ends.
        if !b.get_raw().contains(&b'\r') {
            let mut lf = Vec::with_capacity(body.len());
            for (i, c) in body.iter().enumerate() {
                if !(*c == b'\r' && body.get(i + 1) == Some(&b'\n')) {
                    lf.push(*c);
                }
            }
            body = lf;
        }
    }
    let first_line = match mail.get_body_encoded() {
        mailparse::body::Body::SevenBit(b) | mailparse::body::Body::EightBit(b) => {
            line_at(whole, b.get_raw())
        }
        mailparse::body::Body::Binary(b) => line_at(whole, b.get_raw()),
        _ => None,
    };
    let disposition = mail.get_content_disposition();
    let filename = disposition
        .params
        .get("filename")
        .or_else(|| mail.ctype.params.get("name"))
        .cloned();
    let merge_type = mail
        .headers
        .get_first_value("Merge-Type")
        .or_else(|| mail.headers.get_first_value("X-Merge-Type"));
    let ctype = if mail.headers.get_first_value("Content-Type").is_some() {
        mail.ctype.mimetype.clone()
    } else {
        // No Content-Type: Python's email says text/plain, which is then guessed.
        "text/plain".to_string()
    };
    leaf(
        out,
        leaves,
        &ctype,
        body,
        (filename, merge_type),
        first_line,
        vars,
    )
}

/// The 1-based line of `whole` that `slice` (a sub-slice of it) starts on.
fn line_at(whole: &[u8], slice: &[u8]) -> Option<u32> {
    let start = (slice.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    if start > whole.len() {
        return None;
    }
    let newlines = whole[..start].iter().filter(|b| **b == b'\n').count();
    u32::try_from(newlines + 1).ok()
}

/// For the crate's tests: a MIME multipart of `(headers, body)` parts.
#[cfg(test)]
pub(crate) fn test_multipart(parts: &[(&str, &str)]) -> String {
    let mut s =
        String::from("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n");
    for (headers, body) in parts {
        s.push_str(&format!("--XX\n{headers}\n\n{body}\n"));
    }
    s + "--XX--\n"
}

#[cfg(test)]
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn kinds(data: &[u8]) -> Result<Vec<PartKind>, String> {
        read(data, &Vars::empty())
            .map(|p| p.into_iter().map(|p| p.kind).collect())
            .map_err(|e| e.to_string())
    }

    fn multipart(parts: &[(&str, &str, &str)]) -> String {
        let mut s = String::from(
            "Content-Type: multipart/mixed; boundary=\"BOUND\"\nMIME-Version: 1.0\n\n",
        );
        for (ctype, headers, body) in parts {
            s.push_str(&format!(
                "--BOUND\nContent-Type: {ctype}\nMIME-Version: 1.0\n{headers}\n{body}\n"
            ));
        }
        s.push_str("--BOUND--\n");
        s
    }

    #[test]
    fn single_parts_are_typed_by_their_first_line() {
        let table: &[(&[u8], Result<&[PartKind], &str>)] = &[
            (b"#cloud-config\na: 1\n", Ok(&[PartKind::CloudConfig])),
            (b"  #Cloud-Config\n", Ok(&[PartKind::CloudConfig])),
            (b"#!/bin/sh\necho hi\n", Ok(&[PartKind::Script])),
            (b"#cloud-boothook\n#!/bin/sh\n", Ok(&[PartKind::Boothook])),
            (b"", Ok(&[])),
            (b" \n\t\n", Ok(&[])),
            (
                b"#include\nhttp://example.com/x\n",
                Err("nothing at boot is fetched"),
            ),
            (b"#include-once\nhttp://x\n", Err("#include-once")),
            (
                b"#part-handler\ndef list_types(): pass\n",
                Err("#part-handler"),
            ),
            (
                b"## template: jinja\n#cloud-config\n",
                Ok(&[PartKind::CloudConfig]),
            ),
            (
                b"## template: jinja\n{{ x\n",
                Err("line 2: the Jinja template has a syntax error"),
            ),
            (
                b"## template: jinja\nhello\n",
                Err("the rendered Jinja template starts with"),
            ),
            (
                b"#cloud-config-archive\n- type: x\n",
                Err("#cloud-config-archive"),
            ),
            (b"#cloud-config-jsonp\n[]\n", Err("JSON patch")),
            (b"hello: world\n", Err("which no handler takes")),
        ];
        for (data, want) in table {
            let got = kinds(data);
            match want {
                Ok(k) => assert_eq!(
                    got.as_deref(),
                    Ok(*k),
                    "{:?}",
                    String::from_utf8_lossy(data)
                ),
                Err(w) => assert!(
                    got.as_ref().is_err_and(|e| e.contains(w)),
                    "{got:?} lacks {w}"
                ),
            }
        }
    }

    #[test]
    fn jinja_parts_are_rendered_then_typed_again() {
        let vars = Vars::new(&serde_json::json!({"v1": {"local_hostname": "n1"}}));
        let text = multipart(&[
            (
                "text/jinja2",
                "",
                "## template: jinja\n#cloud-config\nhostname: {{ local_hostname }}",
            ),
            (
                "text/x-shellscript",
                "",
                "## template: jinja\n#!/bin/sh\necho {{ v1.local_hostname }} {{ nope }}",
            ),
            (
                "text/plain",
                "",
                "## template: jinja\n#cloud-boothook\necho {{ local_hostname }}",
            ),
        ]);
        let parts = read(text.as_bytes(), &vars).unwrap();
        let got: Vec<(PartKind, &[u8], Option<Vec<String>>)> = parts
            .iter()
            .map(|p| (p.kind, &p.body[..], p.template.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    PartKind::CloudConfig,
                    &b"#cloud-config\nhostname: n1"[..],
                    Some(vec![])
                ),
                (
                    PartKind::Script,
                    &b"#!/bin/sh\necho n1 CI_MISSING_JINJA_VAR/nope"[..],
                    Some(vec!["nope".to_string()])
                ),
                (
                    PartKind::Boothook,
                    &b"#cloud-boothook\necho n1"[..],
                    Some(vec![])
                ),
            ]
        );
        assert!(parts.iter().all(|p| p.first_line.is_none()));
    }

    #[test]
    fn gzip_user_data_is_opened_and_bombs_refused() {
        assert_eq!(
            kinds(&gz(b"#cloud-config\nruncmd: [ls]\n")),
            Ok(vec![PartKind::CloudConfig])
        );
        let bomb = gz(&vec![b' '; MAX_USERDATA + 10]);
        assert!(kinds(&bomb).unwrap_err().contains("more than"));
        let mut cut = gz(b"#cloud-config\nruncmd: [ls]\n");
        cut.truncate(12);
        assert!(kinds(&cut).unwrap_err().contains("corrupt"));
    }

    #[test]
    fn mime_parts_in_order_with_types_encodings_and_headers() {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode("#!/bin/sh\necho b64\n");
        let gzb = base64::engine::general_purpose::STANDARD
            .encode(gz(b"#cloud-config\nfinal_message: hi\n"));
        let text = multipart(&[
            ("text/cloud-config; charset=\"us-ascii\"", "Merge-Type: list(append)+dict(recurse_array)+str()\nContent-Disposition: attachment; filename=\"a.yaml\"\n", "#cloud-config\nruncmd: [ls]"),
            ("text/x-shellscript", "Content-Transfer-Encoding: base64\n", &b64),
            ("text/x-shellscript-per-boot", "", "#!/bin/sh\necho boot"),
            ("text/x-shellscript-per-once", "", "#!/bin/sh\necho once"),
            ("text/cloud-boothook", "", "#cloud-boothook\necho hook"),
            ("text/plain", "Content-Transfer-Encoding: quoted-printable\n", "#cloud-config\nhostname: a=\nb\n"),
            ("application/x-gzip", "Content-Transfer-Encoding: base64\n", &gzb),
        ]);
        let parts = read(text.as_bytes(), &Vars::empty()).unwrap();
        use Frequency::*;
        let got: Vec<PartKind> = parts.iter().map(|p| p.kind).collect();
        assert_eq!(
            got,
            [
                PartKind::CloudConfig,
                PartKind::Script,
                PartKind::ScriptPer(PerBoot),
                PartKind::ScriptPer(PerOnce),
                PartKind::Boothook,
                PartKind::CloudConfig,
                PartKind::CloudConfig,
            ]
        );
        assert_eq!(parts[0].filename.as_deref(), Some("a.yaml"));
        assert_eq!(
            parts[0].merge_type.as_deref(),
            Some("list(append)+dict(recurse_array)+str()")
        );
        assert_eq!(parts[0].first_line, Some(10));
        assert_eq!(&parts[1].body[..], b"#!/bin/sh\necho b64\n");
        assert_eq!(parts[1].first_line, None);
        assert_eq!(&parts[5].body[..], b"#cloud-config\nhostname: ab\n");
        assert_eq!(&parts[6].body[..], b"#cloud-config\nfinal_message: hi\n");
        assert!(parts.iter().enumerate().all(|(i, p)| p.index == i));
        assert!(!format!("{:?}", parts[1]).contains("b64"));
    }

    #[test]
    fn mime_refusals_and_bounds() {
        let table: &[(String, &str)] = &[
            (
                multipart(&[("text/x-include-url", "", "http://x/y")]),
                "nothing at boot is fetched",
            ),
            (
                multipart(&[("text/x-include-once-url", "", "http://x/y")]),
                "#include-once",
            ),
            (
                multipart(&[("text/plain", "", "#include\nhttp://x/y")]),
                "#include",
            ),
            (
                multipart(&[("text/jinja2", "", "{{ x }}")]),
                "its first line is not `## template: jinja`",
            ),
            (
                multipart(&[("text/part-handler", "", "def x(): pass")]),
                "part handler",
            ),
            (multipart(&[("text/html", "", "<p>")]), "text/html"),
            (
                multipart(&[("text/x-shellscript", "", "echo no shebang")]),
                "does not start with `#!`",
            ),
            (
                multipart(&[("application/gzip", "", "not gzip")]),
                "corrupt",
            ),
            (
                "MIME-Version: 1.0\nContent-Type: multipart/mixed\n\n--x\n\n#cloud-config\n--x--\n"
                    .to_string(),
                "no boundary",
            ),
            (
                format!(
                    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n{}--b--\n",
                    "--b\n\n#!/bin/sh\n".repeat(MAX_PARTS + 1)
                ),
                "256 parts",
            ),
            (
                format!(
                    "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n{}",
                    "--b\n".repeat(MAX_BOUNDARY_LINES + 1)
                ),
                "lines starting",
            ),
        ];
        for (text, want) in table {
            let e = read(text.as_bytes(), &Vars::empty())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e} lacks {want}");
        }
        // Nested multiparts, each level its own boundary: within the bound they are
        // flattened in order; past it refused.
        let nest = |levels: usize| {
            let mut body = "Content-Type: text/cloud-config\n\n#cloud-config\na: 1\n".to_string();
            for l in 0..levels {
                body = format!(
                    "Content-Type: multipart/mixed; boundary=b{l}\n\n--b{l}\n{body}\n--b{l}--\n"
                );
            }
            format!("MIME-Version: 1.0\n{body}")
        };
        assert_eq!(kinds(nest(3).as_bytes()), Ok(vec![PartKind::CloudConfig]));
        assert!(kinds(nest(MAX_MIME_DEPTH + 2).as_bytes())
            .unwrap_err()
            .contains("deeper"));
        assert!(kinds(nest(150).as_bytes()).is_err());
    }
}
