//! The time stamps vmcust writes in its records: seconds since the Unix epoch, shown as
//! RFC 3339 UTC, or as RFC 2822 where cloud-init's own files print them so.

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
pub fn rfc3339(secs: u64) -> String {
    let c = Civil::of(secs);
    format!("{:04}-{:02}-{:02}T{}Z", c.year, c.month, c.day, c.clock())
}

/// Seconds since the epoch as RFC 2822 in UTC, as cloud-init prints times
/// (`time_rfc2822`: `%a, %d %b %Y %H:%M:%S +0000`).
pub fn rfc2822(secs: u64) -> String {
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
    fn rfc2822_dates() {
        assert_eq!(rfc2822(0), "Thu, 01 Jan 1970 00:00:00 +0000");
        assert_eq!(rfc2822(951_782_400), "Tue, 29 Feb 2000 00:00:00 +0000");
        assert_eq!(rfc2822(1_780_000_000), "Thu, 28 May 2026 20:26:40 +0000");
    }
}
