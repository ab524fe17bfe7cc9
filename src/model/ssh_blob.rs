//! An SSH public key blob read field by field, per key type, as OpenSSH's
//! `sshkey_from_blob` reads it for `sshd`: the type inside, each field's length, curve
//! names, key sizes, the whole certificate structure, and nothing after the end.
//!
//! What needs the key's mathematics is left to `sshd`: whether an ECDSA point lies on its
//! curve, and a certificate's signature. Everything a cut, wrapped or mixed-up line breaks
//! is checked here.

use std::fmt;

/// What is wrong with a blob, worded to follow "the ssh-rsa key "c" …" in a message.
/// It never holds key material, only field names, types and counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BlobProblem {
    /// The blob ends inside a field, or before it.
    CutShort(&'static str),
    /// Bytes follow the last field.
    Trailing(usize),
    /// The type inside the blob is not the line's.
    OtherType(String),
    /// A field is there but its value cannot be (a wrong length, a negative number, …).
    Bad(&'static str, String),
}

impl fmt::Display for BlobProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobProblem::CutShort(field) => {
                write!(f, "is cut short (it ends inside or before its {field})")
            }
            BlobProblem::Trailing(n) => write!(f, "has {n} bytes after the end of the key"),
            BlobProblem::OtherType(inner) => {
                // A known type is named whole; anything else is quoted short.
                let named = match super::SSH_KEY_TYPES.contains(&inner.as_str()) {
                    true => format!("\"{inner}\""),
                    false => super::quote(inner),
                };
                write!(
                    f,
                    "holds a key of type {named}; the type before the key must be the key's own"
                )
            }
            BlobProblem::Bad(field, why) => write!(f, "has a bad {field}: {why}"),
        }
    }
}

/// The smallest RSA modulus `sshd` accepts, in bits (OpenSSH's `SSH_RSA_MINIMUM_MODULUS_SIZE`).
const RSA_MIN_BITS: usize = 1024;

/// The largest number OpenSSH reads from a blob, in bytes (`SSHBUF_MAX_BIGNUM`).
const MAX_BIGNUM: usize = 16384 / 8;

/// The most principals a certificate may name (`SSHKEY_CERT_MAX_PRINCIPALS`).
const MAX_PRINCIPALS: usize = 256;

/// The suffix of a certificate's type name.
const CERT_SUFFIX: &str = "-cert-v01@openssh.com";

/// Checks `blob` as the key of a line whose type word is `kind` (one of
/// [`super::SSH_KEY_TYPES`]).
pub(crate) fn check(kind: &str, blob: &[u8]) -> Result<(), BlobProblem> {
    let mut r = Wire(blob);
    let inner = r.cstring("key type")?;
    if inner != kind {
        return Err(BlobProblem::OtherType(inner.to_string()));
    }
    match plain_of_cert(kind) {
        Some(plain) => certificate(&mut r, &plain)?,
        None => key_fields(&mut r, kind)?,
    }
    r.end()
}

/// The plain public key blob a certificate `blob` (of type `kind`, checked by [`check`])
/// certifies: its type and the key fields that follow the nonce, as the `.pub` file of
/// that key holds them. `None` when `kind` is not a certificate type or the blob is
/// malformed.
pub(crate) fn certified_key(kind: &str, blob: &[u8]) -> Option<Vec<u8>> {
    let plain = plain_of_cert(kind)?;
    let mut r = Wire(blob);
    if r.cstring("key type").ok()? != kind {
        return None;
    }
    r.string("certificate nonce").ok()?;
    let fields = r.0;
    key_fields(&mut r, &plain).ok()?;
    let raw = &fields[..fields.len() - r.0.len()];
    let mut out = Vec::with_capacity(4 + plain.len() + raw.len());
    out.extend_from_slice(&(plain.len() as u32).to_be_bytes());
    out.extend_from_slice(plain.as_bytes());
    out.extend_from_slice(raw);
    Some(out)
}

/// The plain key type a certificate type certifies; `None` for a plain type.
fn plain_of_cert(kind: &str) -> Option<String> {
    let base = kind.strip_suffix(CERT_SUFFIX)?;
    Some(if base.starts_with("sk-") {
        format!("{base}@openssh.com")
    } else {
        base.to_string()
    })
}

/// The public key fields that follow the type (or a certificate's nonce) for a plain type.
fn key_fields(r: &mut Wire<'_>, plain: &str) -> Result<(), BlobProblem> {
    match plain {
        "ssh-rsa" => {
            r.mpint("RSA exponent e")?;
            let n = r.mpint("RSA modulus n")?;
            let bits = bit_length(n);
            if bits < RSA_MIN_BITS {
                return Err(BlobProblem::Bad(
                    "RSA modulus n",
                    format!("{bits} bits; sshd accepts RSA keys of {RSA_MIN_BITS} bits or more"),
                ));
            }
            Ok(())
        }
        "ssh-dss" => {
            for field in ["DSA p", "DSA q", "DSA g", "DSA public key y"] {
                r.mpint(field)?;
            }
            Ok(())
        }
        "ssh-ed25519" => ed25519(r),
        "sk-ssh-ed25519@openssh.com" => {
            ed25519(r)?;
            r.cstring("security key application").map(drop)
        }
        "sk-ecdsa-sha2-nistp256@openssh.com" => {
            ecdsa(r, "nistp256")?;
            r.cstring("security key application").map(drop)
        }
        _ => match plain.strip_prefix("ecdsa-sha2-") {
            Some(curve) => ecdsa(r, curve),
            // SSH_KEY_TYPES and this match are kept together by a test.
            None => Err(BlobProblem::Bad("key type", "no reader for it".into())),
        },
    }
}

/// An Ed25519 public key: exactly 32 bytes.
fn ed25519(r: &mut Wire<'_>) -> Result<(), BlobProblem> {
    let key = r.string("Ed25519 public key")?;
    if key.len() != 32 {
        return Err(BlobProblem::Bad(
            "Ed25519 public key",
            format!("{} bytes instead of 32", key.len()),
        ));
    }
    Ok(())
}

/// An ECDSA key: the curve's name (the one the type names) and an uncompressed point of
/// that curve's length.
fn ecdsa(r: &mut Wire<'_>, curve: &str) -> Result<(), BlobProblem> {
    let field_bytes = match curve {
        "nistp256" => 32,
        "nistp384" => 48,
        "nistp521" => 66,
        _ => return Err(BlobProblem::Bad("ECDSA curve", "unknown curve".into())),
    };
    let named = r.cstring("ECDSA curve name")?;
    if named != curve {
        return Err(BlobProblem::Bad(
            "ECDSA curve name",
            format!(
                "{} inside a key whose type names {curve}",
                super::quote(named)
            ),
        ));
    }
    let point = r.string("ECDSA public point")?;
    let want = 1 + 2 * field_bytes;
    if point.first() != Some(&4) || point.len() != want {
        return Err(BlobProblem::Bad(
            "ECDSA public point",
            format!(
                "{} bytes{}; a {curve} point is 0x04 and {} bytes",
                point.len(),
                if point.first() == Some(&4) {
                    ""
                } else {
                    " not in uncompressed form"
                },
                want - 1
            ),
        ));
    }
    Ok(())
}

/// A certificate after its type: nonce, the certified key, serial, type, key id,
/// principals, validity, critical options, extensions, reserved, signature key, signature.
fn certificate(r: &mut Wire<'_>, plain: &str) -> Result<(), BlobProblem> {
    r.string("certificate nonce")?;
    key_fields(r, plain)?;
    r.u64("certificate serial")?;
    let cert_type = r.u32("certificate type")?;
    if cert_type != 1 && cert_type != 2 {
        return Err(BlobProblem::Bad(
            "certificate type",
            format!("{cert_type}; a certificate is for a user (1) or a host (2)"),
        ));
    }
    r.cstring("certificate key id")?;
    let mut principals = Wire(r.string("certificate principals")?);
    let mut count = 0;
    while !principals.0.is_empty() {
        count += 1;
        if count > MAX_PRINCIPALS {
            return Err(BlobProblem::Bad(
                "certificate principals",
                format!("more than {MAX_PRINCIPALS}"),
            ));
        }
        principals.cstring("certificate principal")?;
    }
    r.u64("certificate valid-after time")?;
    r.u64("certificate valid-before time")?;
    for (list, item) in [
        ("certificate critical options", "critical option"),
        ("certificate extensions", "certificate extension"),
    ] {
        let mut options = Wire(r.string(list)?);
        while !options.0.is_empty() {
            options.string(item)?;
            options.string(item)?;
        }
    }
    r.string("certificate reserved field")?;
    // The signing key is a plain key, read as a key of its own.
    let mut ca = Wire(r.string("certificate signature key")?);
    let ca_type = ca.cstring("certificate signature key type")?;
    if !super::SSH_KEY_TYPES.contains(&ca_type) || plain_of_cert(ca_type).is_some() {
        return Err(BlobProblem::Bad(
            "certificate signature key",
            format!("of type {}, which cannot sign", super::quote(ca_type)),
        ));
    }
    key_fields(&mut ca, ca_type)?;
    if !ca.0.is_empty() {
        return Err(BlobProblem::Bad(
            "certificate signature key",
            format!("{} bytes after its end", ca.0.len()),
        ));
    }
    let mut signature = Wire(r.string("certificate signature")?);
    let sig_type = signature.cstring("certificate signature type")?;
    signature.string("certificate signature")?;
    if sig_type.starts_with("sk-") {
        // A security key's signature adds its flags and counter.
        signature.take(5, "certificate signature")?;
    }
    if !signature.0.is_empty() {
        return Err(BlobProblem::Bad(
            "certificate signature",
            format!("{} bytes after its end", signature.0.len()),
        ));
    }
    Ok(())
}

/// The number of significant bits of a big-endian number.
fn bit_length(n: &[u8]) -> usize {
    match n.iter().position(|&b| b != 0) {
        Some(i) => (n.len() - i - 1) * 8 + (8 - n[i].leading_zeros() as usize),
        None => 0,
    }
}

/// The unread rest of a blob, read as SSH wire data (RFC 4251 section 5).
pub(crate) struct Wire<'a>(pub(crate) &'a [u8]);

impl<'a> Wire<'a> {
    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], BlobProblem> {
        if self.0.len() < n {
            return Err(BlobProblem::CutShort(field));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, BlobProblem> {
        let b = self.take(4, field)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, BlobProblem> {
        let b = self.take(8, field)?;
        let mut eight = [0; 8];
        eight.copy_from_slice(b);
        Ok(u64::from_be_bytes(eight))
    }

    /// A length-prefixed string.
    pub(crate) fn string(&mut self, field: &'static str) -> Result<&'a [u8], BlobProblem> {
        let n = self.u32(field)?;
        self.take(n as usize, field)
    }

    /// A string of text: no NUL inside (as `sshbuf_get_cstring`), UTF-8 for messages.
    pub(crate) fn cstring(&mut self, field: &'static str) -> Result<&'a str, BlobProblem> {
        let s = self.string(field)?;
        if s.contains(&0) {
            return Err(BlobProblem::Bad(field, "a NUL byte inside".into()));
        }
        std::str::from_utf8(s).map_err(|_| BlobProblem::Bad(field, "not UTF-8 text".into()))
    }

    /// A positive multiple-precision integer (`mpint`), leading zero bytes dropped, as
    /// `sshbuf_get_bignum2_bytes_direct` reads it.
    pub(crate) fn mpint(&mut self, field: &'static str) -> Result<&'a [u8], BlobProblem> {
        let n = self.string(field)?;
        if n.first().is_some_and(|b| b & 0x80 != 0) {
            return Err(BlobProblem::Bad(field, "a negative number".into()));
        }
        if n.len() > MAX_BIGNUM + 1 || (n.len() == MAX_BIGNUM + 1 && n[0] != 0) {
            return Err(BlobProblem::Bad(
                field,
                format!("longer than {MAX_BIGNUM} bytes"),
            ));
        }
        let start = n.iter().position(|&b| b != 0).unwrap_or(n.len());
        Ok(&n[start..])
    }

    /// Nothing may follow the last field.
    pub(crate) fn end(&self) -> Result<(), BlobProblem> {
        match self.0.len() {
            0 => Ok(()),
            n => Err(BlobProblem::Trailing(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key type the line check accepts has a reader here.
    #[test]
    fn every_key_type_has_a_reader() {
        for kind in super::super::SSH_KEY_TYPES {
            let plain = plain_of_cert(kind).unwrap_or_else(|| kind.to_string());
            assert!(
                super::super::SSH_KEY_TYPES.contains(&plain.as_str()),
                "{kind}: {plain}"
            );
            let problem = key_fields(&mut Wire(&[]), &plain).unwrap_err();
            assert!(
                matches!(problem, BlobProblem::CutShort(_)),
                "{kind}: {problem}"
            );
        }
    }

    #[test]
    fn bit_lengths() {
        for (n, bits) in [
            (&[][..], 0),
            (&[0, 0][..], 0),
            (&[1][..], 1),
            (&[0x80][..], 8),
            (&[0, 0x7f, 0][..], 15),
        ] {
            assert_eq!(bit_length(n), bits, "{n:?}");
        }
    }
}
