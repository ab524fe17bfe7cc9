//! Guestinfo raw data: `guestinfo.metadata`, `guestinfo.userdata` and
//! `guestinfo.vendordata` (each with its `.encoding`), read through the [`GuestRpc`]
//! boundary into a [`Customization`] plus the user-data and vendor-data bytes.
//!
//! Reading follows cloud-init's guestinfo transport (reference §4.4–4.7): a key whose value
//! is empty or `---` is absent and its `.encoding` is not even asked for; an absent or
//! empty `.encoding` means plain text. Unlike cloud-init, an unknown encoding or an
//! undecodable value is an error naming the key instead of being used as plain text.
//!
//! Redaction is a separate step, [`redact`]: the engine calls it once the data is safely
//! recorded, so a crash in between cannot lose a customization the host no longer has.

use crate::host::{guestinfo_key, GuestRpc, RpcError};
use crate::model::Customization;

use super::encoding::{self, DecodeError, Encoding};
use super::metadata::{self, Metadata, MetadataError};

/// The metadata key.
pub(crate) const METADATA: &str = "guestinfo.metadata";
/// The user-data key.
pub(crate) const USERDATA: &str = "guestinfo.userdata";
/// The vendor-data key.
pub(crate) const VENDORDATA: &str = "guestinfo.vendordata";
/// The OVF environment key (read by the OVF source, listed by `vmcust detect`).
pub(crate) const OVF_ENV: &str = "guestinfo.ovfEnv";

/// The value written over a redacted key (cloud-init's marker, read back as absent).
pub(crate) const REDACTED_VALUE: &str = "---";

/// Why guestinfo data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GuestinfoError {
    /// The host could not be asked.
    #[error("reading {key}: {source}")]
    Rpc {
        /// The key being read.
        key: String,
        /// The cause.
        #[source]
        source: RpcError,
    },
    /// A value could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The metadata is malformed.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
}

/// Everything read from guestinfo.
#[derive(Debug, Clone, Default)]
pub struct GuestinfoData {
    /// The parsed metadata (empty when `guestinfo.metadata` is absent).
    pub metadata: Metadata,
    /// The decoded metadata as received, for a real cloud-init's NoCloud seed.
    pub raw_metadata: Option<Vec<u8>>,
    /// The decoded user-data (UTF-8 text bytes).
    pub user_data: Option<Vec<u8>>,
    /// The decoded vendor-data (UTF-8 text bytes).
    pub vendor_data: Option<Vec<u8>>,
    /// The customization the metadata asks for. `instance_id` is the metadata's; when it is
    /// `None` the caller uses the platform default (the lower-cased DMI product UUID).
    pub customization: Customization,
    /// Things skipped or ignored, for the user.
    pub warnings: Vec<String>,
}

/// Reads one key and decodes it by its `.encoding`. `Ok(None)` when the key is absent,
/// empty or `---`.
pub(crate) fn read_key(
    rpc: &mut dyn GuestRpc,
    key: &str,
) -> Result<Option<Vec<u8>>, GuestinfoError> {
    match get_normalized(rpc, key)? {
        Some(value) => decode_value(rpc, key, &value).map(Some),
        None => Ok(None),
    }
}

/// Decodes `value`, read from `key`, by the key's `.encoding`.
fn decode_value(rpc: &mut dyn GuestRpc, key: &str, value: &str) -> Result<Vec<u8>, GuestinfoError> {
    let enc_key = format!("{key}.encoding");
    let enc = get_normalized(rpc, &enc_key)?;
    let enc = Encoding::parse(&enc_key, enc.as_deref())?;
    Ok(encoding::decode(key, enc, value)?)
}

fn get_normalized(rpc: &mut dyn GuestRpc, key: &str) -> Result<Option<String>, GuestinfoError> {
    let raw = rpc
        .get_guestinfo(key)
        .map_err(|source| GuestinfoError::Rpc {
            key: key.to_string(),
            source,
        })?;
    match raw {
        Some(raw) => Ok(encoding::normalize(key, &raw)?),
        None => Ok(None),
    }
}

/// The keys [`read`] reads first; each one's `.encoding` only when it has a value.
pub(crate) const KEYS: [&str; 3] = [METADATA, USERDATA, VENDORDATA];

/// Starts the reads of [`read`] where the transport is slow: the three values at once,
/// each one's `.encoding` as soon as its value is there.
pub(crate) fn prefetch(rpc: &mut dyn GuestRpc) {
    for key in KEYS {
        let has_value = |raw: &[u8]| matches!(encoding::normalize("", raw), Ok(Some(_)));
        rpc.prefetch_then(key, &format!("{key}.encoding"), has_value);
    }
}

/// Reads metadata, user-data and vendor-data: the three values, then the encodings of
/// those that have one (where the transport is slow, started ahead: [`prefetch`]).
/// `Ok(None)` when none of the three has a value (no guestinfo data for this VM).
pub fn read(rpc: &mut dyn GuestRpc) -> Result<Option<GuestinfoData>, GuestinfoError> {
    prefetch(rpc);
    let mut values = Vec::new();
    for key in KEYS {
        values.push(get_normalized(rpc, key)?);
    }
    let mut decoded = Vec::new();
    for (key, value) in KEYS.into_iter().zip(values) {
        decoded.push(value.map(|v| decode_value(rpc, key, &v)).transpose()?);
    }
    let [md, userdata, vendordata]: [Option<Vec<u8>>; 3] =
        decoded.try_into().expect("one value per key");
    if md.is_none() && userdata.is_none() && vendordata.is_none() {
        return Ok(None);
    }
    // `read_key` only returns UTF-8 text.
    let text = md
        .as_deref()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let metadata = metadata::parse(METADATA, &text)?;
    let (customization, warnings) = metadata::customization(METADATA, &metadata)?;
    Ok(Some(GuestinfoData {
        metadata,
        raw_metadata: md,
        user_data: userdata,
        vendor_data: vendordata,
        customization,
        warnings,
    }))
}

/// Clears the listed keys on the host as cloud-init does: `info-set guestinfo.<k> ---`, then
/// `info-set guestinfo.<k>.encoding ` (a single space). Failures do not stop the others and
/// come back as warnings.
pub(crate) fn redact(rpc: &mut dyn GuestRpc, keys: &[String]) -> Vec<String> {
    let mut warnings = Vec::new();
    for k in keys {
        let key = guestinfo_key(k);
        for (key, value) in [
            (key.clone(), REDACTED_VALUE),
            (format!("{key}.encoding"), " "),
        ] {
            if let Err(e) = rpc.set_guestinfo(&key, value) {
                tracing::warn!("redacting {key}: {e}");
                warnings.push(format!("redacting {key}: {e}"));
            }
        }
    }
    warnings
}

/// Guestinfo raw cloud-init data: `guestinfo.metadata`, `.userdata` and `.vendordata`,
/// read from the host when the door has one (at boot only on a new VM; `--guestinfo-dir`
/// on the command line).
pub(crate) struct Guestinfo;

impl super::Source for Guestinfo {
    fn names(&self) -> &'static [&'static str] {
        &["guestinfo"]
    }

    fn prefetch(&self, rpc: &mut dyn GuestRpc) {
        prefetch(rpc);
    }

    fn read(
        &self,
        door: &mut super::Door,
    ) -> Result<Vec<super::SourceData>, crate::failure::Failure> {
        let Some(rpc) = door.rpc.as_mut().map(|r| &mut **r as &mut dyn GuestRpc) else {
            return Ok(Vec::new());
        };
        let Some(data) = read(rpc).map_err(|e| crate::failure::Failure::invalid(e.to_string()))?
        else {
            return Ok(Vec::new());
        };
        let mut out = super::SourceData::new("guestinfo", "guestinfo");
        out.warnings
            .extend(data.warnings.iter().map(|w| format!("guestinfo: {w}")));
        out.customization = data.customization;
        out.user_data = out.own(data.user_data);
        out.vendor_data = out.own(data.vendor_data);
        out.raw_metadata = data.raw_metadata;
        out.redact = data.metadata.redact.clone();
        // Only when the metadata asks to wait: a field like any other, set or not.
        let w = data.metadata.wait_on_network;
        out.wait_on_network = (w.ipv4 || w.ipv6).then_some(w);
        Ok(vec![out])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::guestinfo_dir::GuestinfoDir;
    use crate::model::Ipv4Config;

    fn host(files: &[(&str, &str)]) -> (tempfile::TempDir, GuestinfoDir) {
        let d = tempfile::tempdir().unwrap();
        for (k, v) in files {
            std::fs::write(d.path().join(k), v).unwrap();
        }
        let h = GuestinfoDir::new(d.path());
        (d, h)
    }

    #[test]
    fn nothing_there_is_none_and_costs_three_rpcs() {
        let (_d, mut h) = host(&[]);
        assert!(read(&mut h).unwrap().is_none());
        assert_eq!(
            h.recorded().unwrap(),
            [
                "info-get guestinfo.metadata",
                "info-get guestinfo.userdata",
                "info-get guestinfo.vendordata"
            ]
        );
    }

    #[test]
    fn reads_all_three_with_encodings() {
        let (_d, mut h) = host(&[
            (
                METADATA,
                "instance-id: cloud-vm\nlocal-hostname: web.example.com\nnetwork:\n  version: 2\n  ethernets:\n    e:\n      match: {macaddress: '00:50:56:00:00:01'}\n      dhcp4: true\n",
            ),
            (USERDATA, "I2Nsb3VkLWNvbmZpZwo=\n"), // "#cloud-config\n"
            ("guestinfo.userdata.encoding", "b64\n"),
            (VENDORDATA, "---"),
            ("guestinfo.vendordata.encoding", "bogus"),
        ]);
        let data = read(&mut h).unwrap().unwrap();
        assert_eq!(data.user_data.as_deref(), Some(&b"#cloud-config\n"[..]));
        assert_eq!(data.vendor_data, None);
        let c = &data.customization;
        assert_eq!(c.instance_id.as_deref(), Some("cloud-vm"));
        assert_eq!(
            c.identity.host_name.as_ref().map(|v| v.as_str()),
            Some("web")
        );
        assert_eq!(
            c.identity.domain.as_ref().map(|v| v.as_str()),
            Some("example.com")
        );
        let net = c.network.as_ref().unwrap();
        assert_eq!(net.interfaces[0].ip.ipv4, Ipv4Config::Dhcp);
        // Redacted vendordata: its encoding is not asked for.
        assert!(!h
            .recorded()
            .unwrap()
            .contains(&"info-get guestinfo.vendordata.encoding".to_string()));
    }

    #[test]
    fn errors_name_the_key() {
        let (_d, mut h) = host(&[(USERDATA, "abc"), ("guestinfo.userdata.encoding", "rot13")]);
        let e = read(&mut h).unwrap_err().to_string();
        assert!(
            e.starts_with("guestinfo.userdata.encoding: unknown encoding"),
            "{e}"
        );
        let (_d, mut h) = host(&[(METADATA, "[This is not json or yaml format]a=b")]);
        let e = read(&mut h).unwrap_err().to_string();
        assert!(
            e.starts_with("guestinfo.metadata: not a json object"),
            "{e}"
        );
    }

    #[test]
    fn redaction_rpcs() {
        let (d, mut h) = host(&[
            (METADATA, "redact: [userdata, guestinfo.vendordata]\n"),
            (USERDATA, "secret"),
        ]);
        let data = read(&mut h).unwrap().unwrap();
        let warnings = redact(&mut h, &data.metadata.redact);
        assert!(warnings.is_empty());
        let log = h.recorded().unwrap();
        assert_eq!(
            log[log.len() - 4..],
            [
                "info-set guestinfo.userdata ---",
                "info-set guestinfo.userdata.encoding  ",
                "info-set guestinfo.vendordata ---",
                "info-set guestinfo.vendordata.encoding  ",
            ]
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join(USERDATA)).unwrap(),
            "---"
        );
        // Next boot: the redacted user-data reads as absent.
        let again = read(&mut h).unwrap().unwrap();
        assert_eq!(again.user_data, None);
    }
}
