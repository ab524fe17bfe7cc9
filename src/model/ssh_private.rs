//! The public half of an SSH private key, read from the key file itself without running
//! a program: OpenSSH's own format keeps the public key beside the private one (checked
//! against the private section's copy), PKCS#1 RSA keys hold the modulus and exponent,
//! and SEC1/PKCS#8 EC keys the public point. So a given host key can be checked against
//! its `.pub` line, and the `.pub` line made when none is given, on an offline image and
//! with no secret handed to a tool.
//!
//! Nothing here ever holds key material in an error: messages name formats, types and
//! fields only.

use base64::Engine as _;

use super::ssh_blob::Wire;

/// The longest private key text taken: an RSA key of 16384 bits in PEM is about 12 KiB.
pub(crate) const MAX_PRIVATE_KEY: usize = 16 * 1024;

/// What a private key says of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublicHalf {
    /// The key type as a `.pub` line names it (`ssh-ed25519`, `ssh-rsa`,
    /// `ecdsa-sha2-nistp256`, `ssh-dss`).
    pub kind: String,
    /// The public key blob, as the `.pub` line holds it in base64.
    pub blob: Vec<u8>,
}

impl PublicHalf {
    /// `type base64`, the start of the key's `.pub` line.
    pub(crate) fn line(&self) -> String {
        format!(
            "{} {}",
            self.kind,
            base64::engine::general_purpose::STANDARD.encode(&self.blob)
        )
    }
}

/// Why a DSA key is refused.
const DSA: &str = "a DSA key: vmcust installs rsa, ecdsa and ed25519 host keys (OpenSSH 9.8 \
                   and later cannot use DSA)";

/// How to give a key vmcust can read, for messages.
const FIX: &str = "give the key file as ssh-keygen writes it without a passphrase \
                   (ssh-keygen -t ed25519 -N '' -f KEY)";

/// Reads the public half of the unencrypted private key `text`.
pub(crate) fn public_half(text: &str) -> Result<PublicHalf, String> {
    if text.len() > MAX_PRIVATE_KEY {
        return Err(format!(
            "a private key of {} bytes; at most {MAX_PRIVATE_KEY}",
            text.len()
        ));
    }
    if text.trim_start().starts_with("PuTTY-User-Key-File") {
        return Err(
            "a PuTTY key; convert it to OpenSSH's format (puttygen KEY -O private-openssh-new -o KEY.openssh)"
                .into(),
        );
    }
    let (label, headers, der) = pem(text)?;
    if headers.iter().any(|h| h.contains("ENCRYPTED")) {
        return Err(format!(
            "an encrypted {label}: sshd cannot read a host key behind a passphrase; remove it \
             (ssh-keygen -p -N '' -f KEY)"
        ));
    }
    match label.as_str() {
        "OPENSSH PRIVATE KEY" => openssh(&der),
        "RSA PRIVATE KEY" => pkcs1_rsa(&der),
        "EC PRIVATE KEY" => sec1_ec(&der, None),
        "PRIVATE KEY" => pkcs8(&der),
        "ENCRYPTED PRIVATE KEY" => Err(format!(
            "an encrypted PKCS#8 key: sshd cannot read a host key behind a passphrase; {FIX}"
        )),
        "DSA PRIVATE KEY" => Err(DSA.into()),
        _ => Err(format!(
            "a PEM block of type \"{label}\", not a private key; {FIX}"
        )),
    }
}

/// The lines of `text` as [`pem`] reads them: trimmed, so a block indented (as a YAML
/// block may leave it) or with CRLF endings is taken.
fn trimmed_lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).collect()
}

/// The key `text` (one [`public_half`] took) as sshd can load it: OpenSSH wants the
/// BEGIN and END markers at the start of a line, so each line is trimmed as [`pem`] reads
/// it, the blank lines around the block are dropped and every line ends in LF.
pub(crate) fn normalised(text: &str) -> String {
    let lines = trimmed_lines(text);
    let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(first, |i| i + 1);
    // Never longer than `text` and a final newline: the secret is not copied by a
    // reallocation.
    let mut out = String::with_capacity(text.len() + 1);
    for l in &lines[first..end] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The label, header lines and decoded body of the one PEM block in `text`.
fn pem(text: &str) -> Result<(String, Vec<String>, Vec<u8>), String> {
    let lines = trimmed_lines(text);
    let begin = lines
        .iter()
        .position(|l| l.starts_with("-----BEGIN ") && l.ends_with("-----"))
        .ok_or_else(|| format!("not a private key (no -----BEGIN line); {FIX}"))?;
    let label = lines[begin]
        .trim_start_matches("-----BEGIN ")
        .trim_end_matches('-')
        .to_string();
    if label.len() > 40
        || !label
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b' ' || b == b'#')
    {
        return Err(format!(
            "not a private key (an unknown -----BEGIN line); {FIX}"
        ));
    }
    let end_line = format!("-----END {label}-----");
    let end = lines[begin..]
        .iter()
        .position(|l| *l == end_line)
        .map(|i| i + begin)
        .ok_or_else(|| {
            format!("a {label} without its -----END line (cut short); copy the whole file")
        })?;
    if lines[end + 1..].iter().any(|l| !l.is_empty())
        || lines[..begin].iter().any(|l| !l.is_empty())
    {
        return Err(format!(
            "text before or after the {label}; give only the key file's contents"
        ));
    }
    let mut headers = Vec::new();
    let mut body = String::new();
    for l in &lines[begin + 1..end] {
        if l.contains(':') {
            headers.push(l.to_string());
        } else {
            body.push_str(l);
        }
    }
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .map_err(|_| format!("a {label} whose body is not valid base64; copy the whole file"))?;
    Ok((label, headers, der))
}

/// The SSH wire string of `bytes`.
fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// OpenSSH's `openssh-key-v1`: the public blob of the header, which must be the public
/// part of the (unencrypted) private section.
fn openssh(data: &[u8]) -> Result<PublicHalf, String> {
    let bad =
        |why: &str| format!("an OpenSSH private key that is damaged ({why}); copy the whole file");
    let rest = data
        .strip_prefix(b"openssh-key-v1\0")
        .ok_or_else(|| bad("no openssh-key-v1 header"))?;
    let mut r = Wire(rest);
    let cipher = r.cstring("cipher").map_err(|e| bad(&e.to_string()))?;
    if cipher != "none" {
        return Err(
            "an OpenSSH private key encrypted with a passphrase: sshd cannot read a host key \
             behind a passphrase; remove it (ssh-keygen -p -N '' -f KEY)"
                .into(),
        );
    }
    let mut take = |field| r.string(field).map_err(|e| bad(&e.to_string()));
    take("kdf name")?;
    take("kdf options")?;
    let count = r.u32("key count").map_err(|e| bad(&e.to_string()))?;
    if count != 1 {
        return Err(bad(&format!("{count} keys in one file")));
    }
    let public = r.string("public key").map_err(|e| bad(&e.to_string()))?;
    let private = r
        .string("private section")
        .map_err(|e| bad(&e.to_string()))?;
    let mut p = Wire(private);
    let c1 = p.u32("check").map_err(|e| bad(&e.to_string()))?;
    let c2 = p.u32("check").map_err(|e| bad(&e.to_string()))?;
    if c1 != c2 {
        return Err(bad("its check numbers differ"));
    }
    let kind = p
        .cstring("key type")
        .map_err(|e| bad(&e.to_string()))?
        .to_string();
    // The public fields of the private section, in the order of the public blob.
    let mut blob = Vec::new();
    put_string(&mut blob, kind.as_bytes());
    let mut field = |name| p.string(name).map_err(|e| bad(&e.to_string()));
    match kind.as_str() {
        "ssh-ed25519" => {
            let pk = field("Ed25519 public key")?;
            let sk = field("Ed25519 private key")?;
            if sk.len() != 64 || sk[32..] != *pk {
                return Err(bad("its Ed25519 private key does not hold its public key"));
            }
            put_string(&mut blob, pk);
        }
        "ssh-rsa" => {
            let n = field("RSA modulus")?;
            let e = field("RSA exponent")?;
            put_string(&mut blob, e);
            put_string(&mut blob, n);
        }
        "ssh-dss" => return Err(DSA.into()),
        k if k.starts_with("ecdsa-sha2-") => {
            let curve = field("ECDSA curve")?;
            let q = field("ECDSA public point")?;
            put_string(&mut blob, curve);
            put_string(&mut blob, q);
        }
        _ => {
            return Err(format!(
                "an OpenSSH private key of type {}, which cannot be a host key here",
                super::quote(&kind)
            ))
        }
    }
    if blob != public {
        return Err(bad("its public key is not the one of its private key"));
    }
    super::ssh_blob::check(&kind, &blob)
        .map_err(|e| format!("a {kind} private key whose public key {e}"))?;
    Ok(PublicHalf { kind, blob })
}

/// A DER reader: tag, length, contents.
struct Der<'a>(&'a [u8]);

impl<'a> Der<'a> {
    /// The contents of the next element, which must have `tag`.
    fn next(&mut self, tag: u8, what: &str) -> Result<&'a [u8], String> {
        let bad = || format!("a damaged key: its {what} cannot be read; copy the whole file");
        let (&t, rest) = self.0.split_first().ok_or_else(bad)?;
        if t != tag {
            return Err(bad());
        }
        let (&first, mut rest) = rest.split_first().ok_or_else(bad)?;
        let len = if first < 0x80 {
            first as usize
        } else {
            let n = (first & 0x7f) as usize;
            if n == 0 || n > 3 || rest.len() < n {
                return Err(bad());
            }
            let len = rest[..n].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
            rest = &rest[n..];
            len
        };
        if rest.len() < len {
            return Err(bad());
        }
        let (body, after) = rest.split_at(len);
        self.0 = after;
        Ok(body)
    }

    /// The tag of the next element, if any.
    fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }
}

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const OCTET_STRING: u8 = 0x04;
const BIT_STRING: u8 = 0x03;
const OID: u8 = 0x06;

/// A DER INTEGER's contents as an SSH mpint's (both are minimal two's complement).
fn rsa_blob(e: &[u8], n: &[u8]) -> Vec<u8> {
    let mut blob = Vec::new();
    put_string(&mut blob, b"ssh-rsa");
    put_string(&mut blob, e);
    put_string(&mut blob, n);
    blob
}

/// PKCS#1 `RSAPrivateKey`: version, n, e, …
fn pkcs1_rsa(der: &[u8]) -> Result<PublicHalf, String> {
    let mut outer = Der(der);
    let mut seq = Der(outer.next(SEQUENCE, "RSA key")?);
    seq.next(INTEGER, "RSA key version")?;
    let n = seq.next(INTEGER, "RSA modulus")?;
    let e = seq.next(INTEGER, "RSA exponent")?;
    let blob = rsa_blob(e, n);
    super::ssh_blob::check("ssh-rsa", &blob)
        .map_err(|p| format!("an RSA private key whose public key {p}"))?;
    Ok(PublicHalf {
        kind: "ssh-rsa".into(),
        blob,
    })
}

/// The curve names of the OIDs of the NIST curves OpenSSH takes.
const CURVES: &[(&[u8], &str)] = &[
    (
        &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07],
        "nistp256",
    ),
    (&[0x2b, 0x81, 0x04, 0x00, 0x22], "nistp384"),
    (&[0x2b, 0x81, 0x04, 0x00, 0x23], "nistp521"),
];

/// SEC1 `ECPrivateKey`: version, the private number, `[0]` curve, `[1]` public point.
/// `curve` is the PKCS#8 wrapper's, when there is one.
fn sec1_ec(der: &[u8], curve: Option<&[u8]>) -> Result<PublicHalf, String> {
    let mut outer = Der(der);
    let mut seq = Der(outer.next(SEQUENCE, "EC key")?);
    seq.next(INTEGER, "EC key version")?;
    seq.next(OCTET_STRING, "EC private number")?;
    let mut oid = curve;
    let mut point = None;
    while let Some(tag) = seq.peek() {
        match tag {
            0xa0 => {
                let mut p = Der(seq.next(0xa0, "EC curve")?);
                oid = Some(p.next(OID, "EC curve")?);
            }
            0xa1 => {
                let mut p = Der(seq.next(0xa1, "EC public point")?);
                let bits = p.next(BIT_STRING, "EC public point")?;
                // The first byte counts the unused bits of the last: none in a point.
                point = bits.split_first().filter(|(u, _)| **u == 0).map(|(_, q)| q);
            }
            _ => break,
        }
    }
    let curve = oid
        .and_then(|o| CURVES.iter().find(|(c, _)| *c == o))
        .map(|(_, name)| *name)
        .ok_or(
            "an EC private key on a curve OpenSSH does not take (it takes P-256, P-384, P-521)",
        )?;
    let point = point.ok_or(
        "an EC private key without its public point; write it in OpenSSH's format \
         (ssh-keygen -p -N '' -f KEY)",
    )?;
    let kind = format!("ecdsa-sha2-{curve}");
    let mut blob = Vec::new();
    put_string(&mut blob, kind.as_bytes());
    put_string(&mut blob, curve.as_bytes());
    put_string(&mut blob, point);
    super::ssh_blob::check(&kind, &blob)
        .map_err(|p| format!("an EC private key whose public key {p}"))?;
    Ok(PublicHalf { kind, blob })
}

/// PKCS#8 `PrivateKeyInfo` around an RSA or EC key.
fn pkcs8(der: &[u8]) -> Result<PublicHalf, String> {
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    const EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    const ED25519: &[u8] = &[0x2b, 0x65, 0x70];
    let mut outer = Der(der);
    let mut seq = Der(outer.next(SEQUENCE, "PKCS#8 key")?);
    seq.next(INTEGER, "PKCS#8 version")?;
    let mut alg = Der(seq.next(SEQUENCE, "PKCS#8 algorithm")?);
    let oid = alg.next(OID, "PKCS#8 algorithm")?;
    let inner = seq.next(OCTET_STRING, "PKCS#8 key")?;
    match oid {
        RSA => pkcs1_rsa(inner),
        EC => {
            let curve = alg.next(OID, "EC curve")?;
            sec1_ec(inner, Some(curve))
        }
        ED25519 => Err(
            "a PKCS#8 Ed25519 key (it holds no public key); write it in OpenSSH's format \
             (ssh-keygen -p -N '' -f KEY)"
                .into(),
        ),
        _ => Err(format!(
            "a PKCS#8 key of an algorithm OpenSSH does not take; {FIX}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_normalised_as_its_check_reads_it() {
        let key =
            "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\nBBBB\n-----END OPENSSH PRIVATE KEY-----\n";
        let table = [
            key.to_string(),
            key.replace('\n', "\r\n"),
            key.lines().map(|l| format!("    {l}\n")).collect(),
            format!("\n\n  {}  \n\n", key.trim_end()),
            key.trim_end().to_string(),
        ];
        for text in &table {
            assert_eq!(normalised(text), key, "{text:?}");
        }
    }

    #[test]
    fn what_is_not_a_usable_key_is_refused_without_a_quote() {
        let secretish = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwMTIz";
        let table: &[(String, &str)] = &[
            (format!("{secretish}\n"), "no -----BEGIN line"),
            (
                format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{secretish}\n"),
                "without its -----END line",
            ),
            (
                format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{secretish}\n-----END OPENSSH PRIVATE KEY-----\n"),
                "no openssh-key-v1 header",
            ),
            (
                format!("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n{secretish}\n-----END RSA PRIVATE KEY-----\n"),
                "encrypted RSA PRIVATE KEY",
            ),
            (
                format!("-----BEGIN CERTIFICATE-----\n{secretish}\n-----END CERTIFICATE-----\n"),
                "not a private key",
            ),
            (
                "-----BEGIN EC PRIVATE KEY-----\n!!\n-----END EC PRIVATE KEY-----\n".to_string(),
                "not valid base64",
            ),
            ("PuTTY-User-Key-File-3: ssh-ed25519\n".into(), "PuTTY"),
            ("x".repeat(MAX_PRIVATE_KEY + 1), "at most"),
        ];
        for (text, want) in table {
            let e = public_half(text).unwrap_err();
            assert!(e.contains(want), "{want}: {e}");
            assert!(!e.contains(&secretish[..12]), "{e}");
        }
    }
}
