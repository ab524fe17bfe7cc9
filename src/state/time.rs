//! The time stamps vmcust writes in its records: seconds since the Unix epoch in memory,
//! stored and shown as RFC 3339 UTC ([`as_rfc3339`] for vmcust's own JSON records, which
//! still read the Unix integers older records hold), or as RFC 2822 where cloud-init's
//! own files print them so.

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A time of day on a calendar date, UTC.
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    /// Seconds since midnight.
    secs: u64,
    /// Days since the epoch, a Thursday.
    days: u64,
}

impl Civil {
    fn of(secs: u64) -> Civil {
        let days = secs / 86_400;
        // Howard Hinnant's days-to-civil, valid for every u64 second count we will meet.
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Civil {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day: doy - (153 * mp + 2) / 5 + 1,
            secs: secs % 86_400,
            days,
        }
    }

    fn clock(&self) -> String {
        let s = self.secs;
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    }
}

/// Seconds since the epoch as an RFC 3339 UTC time, `2026-05-01T12:00:00Z`.
pub(crate) fn rfc3339(secs: u64) -> String {
    let c = Civil::of(secs);
    format!("{:04}-{:02}-{:02}T{}Z", c.year, c.month, c.day, c.clock())
}

/// The seconds since the epoch of an RFC 3339 time (`2026-05-01T12:00:00Z`, a fraction
/// and a `+hh:mm`/`-hh:mm` offset allowed, the fraction dropped); `None` for anything
/// else or a time before the epoch.
pub(crate) fn parse_rfc3339(t: &str) -> Option<u64> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| t.get(r).and_then(num_of);
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (h, m) = (
                rest.get(1..3).and_then(num_of)?,
                rest.get(4..6).and_then(num_of)?,
            );
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    // Howard Hinnant's days-from-civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset;
    u64::try_from(secs).ok()
}

/// A field of digits only (no sign, no space) as a number.
fn num_of(s: &str) -> Option<i64> {
    s.bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| s.parse().ok())
        .flatten()
}

/// Serde for a time stamp of vmcust's own JSON records (`result.json`, `applied.json`,
/// `boot-times.json`, `/run/vmcust/status.json`): written as an RFC 3339 string, read
/// from one or from the Unix integer of a record an older vmcust wrote. Use with
/// `#[serde(with = "crate::state::time::as_rfc3339")]` on a `u64` of seconds.
pub(crate) mod as_rfc3339 {
    use serde::{de, Deserializer, Serializer};

    /// Writes `secs` as RFC 3339 UTC.
    pub(crate) fn serialize<S: Serializer>(secs: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::rfc3339(*secs))
    }

    /// Reads an RFC 3339 string or a Unix integer.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct Stamp;
        impl de::Visitor<'_> for Stamp {
            type Value = u64;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "an RFC 3339 time such as 2026-05-01T12:00:00Z, or seconds since the epoch",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::custom(format!("time {v} is before the epoch")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
                if v.is_finite() && v >= 0.0 {
                    // Whole seconds, as every other stamp.
                    Ok(v as u64)
                } else {
                    Err(E::custom(format!("time {v} is not a time")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                super::parse_rfc3339(v)
                    .ok_or_else(|| E::custom(format!("{v:?} is not an RFC 3339 time")))
            }
        }
        d.deserialize_any(Stamp)
    }
}

/// Seconds since the epoch as RFC 2822 in UTC, as cloud-init prints times
/// (`time_rfc2822`: `%a, %d %b %Y %H:%M:%S +0000`).
pub(crate) fn rfc2822(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let c = Civil::of(secs);
    format!(
        "{}, {:02} {} {:04} {} +0000",
        DAYS[(c.days % 7) as usize],
        c.day,
        MONTHS[(c.month - 1) as usize],
        c.year,
        c.clock()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_780_000_000), "2026-05-28T20:26:40Z");
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes_and_refuses_the_rest() {
        for secs in [0, 951_782_400, 1_780_000_000, 4_102_444_799] {
            assert_eq!(parse_rfc3339(&rfc3339(secs)), Some(secs), "{secs}");
        }
        for (text, want) in [
            ("2026-05-28T20:26:40.123456Z", Some(1_780_000_000)),
            ("2026-05-28T22:26:40+02:00", Some(1_780_000_000)),
            ("2026-05-28T19:26:40-01:00", Some(1_780_000_000)),
            ("2026-05-28 20:26:40Z", Some(1_780_000_000)),
            ("1969-12-31T23:59:59Z", None),
            ("2026-13-01T00:00:00Z", None),
            ("2026-05-28T20:26:40", None),
            ("2026-05-28T20:26:40.Z", None),
            ("2026-05-28T20:26:40+0200", None),
            ("+026-05-28T20:26:40Z", None),
            ("", None),
        ] {
            assert_eq!(parse_rfc3339(text), want, "{text}");
        }
    }

    /// Records are written as RFC 3339 and read from it or from an older record's
    /// Unix integer.
    #[test]
    fn records_write_rfc3339_and_read_old_integers() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct R {
            #[serde(with = "as_rfc3339")]
            at: u64,
        }
        let text = serde_json::to_string(&R { at: 1_780_000_000 }).unwrap();
        assert_eq!(text, r#"{"at":"2026-05-28T20:26:40Z"}"#);
        assert_eq!(serde_json::from_str::<R>(&text).unwrap().at, 1_780_000_000);
        assert_eq!(
            serde_json::from_str::<R>(r#"{"at":1780000000}"#)
                .unwrap()
                .at,
            1_780_000_000
        );
        assert!(serde_json::from_str::<R>(r#"{"at":"yesterday"}"#).is_err());
        assert!(serde_json::from_str::<R>(r#"{"at":-5}"#).is_err());
    }

    #[test]
    fn rfc2822_dates() {
        assert_eq!(rfc2822(0), "Thu, 01 Jan 1970 00:00:00 +0000");
        assert_eq!(rfc2822(951_782_400), "Tue, 29 Feb 2000 00:00:00 +0000");
        assert_eq!(rfc2822(1_780_000_000), "Thu, 28 May 2026 20:26:40 +0000");
    }
}
