//! The `[PASSWORD]` section: the base64 root password and the reset flag.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Serialize;
use zeroize::Zeroizing;

use crate::check::Checker;
use crate::secret::Secret;

/// Root password settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Password {
    /// `-PASS`, decoded; `None` if absent or empty (then the password is left alone, as in cloud-init).
    pub root: Option<Secret>,
    /// `RESET`: expire the passwords of all uid-0 users. Default no.
    pub reset: bool,
}

pub(crate) fn parse_password(ck: &mut Checker<'_>) -> Password {
    let root = match ck.take("PASSWORD", "-PASS") {
        None => None,
        Some(entry) => match ck.parse_entry(entry, decode) {
            Some(None) => {
                let message = "empty password; the root password is left unchanged";
                ck.warn(Some(entry.line), "PASSWORD", Some("-PASS"), message);
                None
            }
            decoded => decoded.flatten(),
        },
    };
    let reset = ck.yes_no("PASSWORD", "RESET").unwrap_or(false);
    Password { root, reset }
}

/// Decodes standard base64 to UTF-8 and strips exactly one trailing newline: chpasswd reads lines, so
/// the newline cloud-init keeps was never part of the password. Errors never contain the value.
fn decode(b64: &str) -> Result<Option<Secret>, &'static str> {
    if b64.is_empty() {
        return Ok(None);
    }
    // Zeroizing, so that the decoded bytes are wiped on every path, including the error ones.
    let bytes = Zeroizing::new(STANDARD.decode(b64).map_err(|_| {
        "not valid base64; use standard base64 with padding (the value is not shown)"
    })?);
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| "the decoded password is not valid UTF-8 (the value is not shown)")?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    Ok((!text.is_empty()).then(|| Secret::new(text.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_one_newline() {
        assert_eq!(decode("c2VjcmV0Cg==").unwrap().unwrap().expose(), "secret");
        assert_eq!(
            decode("c2VjcmV0CQo=").unwrap().unwrap().expose(),
            "secret\t"
        );
        assert_eq!(
            decode("c2VjcmV0CgoK").unwrap().unwrap().expose(),
            "secret\n\n"
        );
        assert!(decode("Cg==").unwrap().is_none());
    }

    #[test]
    fn errors_hide_the_value() {
        let e = decode("!!notbase64!!").unwrap_err();
        assert!(!e.contains("notbase64"));
        assert!(decode("/w==").is_err(), "0xff is not UTF-8");
    }
}
