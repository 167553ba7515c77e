//! Points in time and durations on the command line: one parser for every
//! time option, and one way to show a time in a table.
//!
//! An instant is epoch milliseconds (an integer, as Kafka stores
//! timestamps) or an ISO-8601 date-time. A date-time with an offset (`Z`,
//! `+02:00`, `+0200`, `+02`) is that instant; one without an offset is read
//! as UTC, as Kafka's `Utils.getDateTime` (behind `kafka-consumer-groups
//! --to-datetime`) appends `Z` to a time with none. Kafka's parser also
//! requires milliseconds (`yyyy-MM-dd'T'HH:mm:ss.SSS`); klog accepts the
//! fraction as optional.
//!
//! A duration is ISO-8601 as Java's `Duration.parse` reads it
//! (`kafka-consumer-groups --by-duration`): `PnDTnHnMn.nS`, a day being
//! exactly 24 hours, components and the whole optionally negative.

use std::str::FromStr;

use jiff::{civil, Span, SpanRelativeTo, Timestamp, Unit};

/// Parse an instant: epoch milliseconds, or an ISO-8601 date-time.
pub fn parse_instant_ms(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    if let Ok(t) = Timestamp::from_str(s) {
        return Ok(t.as_millisecond());
    }
    // The date library's instants stop about a day short of the years
    // -9999 and 9999 (room kept for any offset), but every date-time of
    // those years is an instant in epoch milliseconds, as Kafka's
    // `Utils.getDateTime` (a `SimpleDateFormat`) reads it: counted from the
    // civil fields, less the offset.
    let (fields, offset_s) = split_offset(s);
    // Only the fields: the date library's civil parse would pass over an
    // offset (or a time zone) it does not check.
    let time = fields.split_once(['T', 't', ' ']).map_or("", |(_, t)| t);
    if !time
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ':' | '.' | ','))
    {
        return Err(format!(
            "{s:?} is neither epoch milliseconds nor an ISO-8601 date-time \
             (e.g. 2026-01-30T17:00:00Z, 2026-01-30T18:00:00.000+01:00): its offset is not \
             Z, +HH:MM, +HHMM or +HH (up to 18 hours)"
        ));
    }
    match civil::DateTime::from_str(fields) {
        Ok(dt) => Ok(civil_ms(dt) - offset_s * 1000),
        Err(e) => Err(format!(
            "{s:?} is neither epoch milliseconds nor an ISO-8601 date-time \
             (e.g. 2026-01-30T17:00:00Z, 2026-01-30T18:00:00.000+01:00): {e}"
        )),
    }
}

/// A date-time's fields and its offset in seconds: `Z`, `+HH:MM`, `+HHMM`
/// or `+HH` (or `-`) after the seconds and fraction; none is UTC, as Kafka's
/// `Utils.getDateTime` reads a time without one. An offset that is not one
/// of these stays with the fields, whose parse then fails.
fn split_offset(s: &str) -> (&str, i64) {
    if let Some(fields) = s.strip_suffix(['Z', 'z']) {
        return (fields, 0);
    }
    let Some(at) = s
        .get(19..)
        .and_then(|rest| rest.find(['+', '-']))
        .map(|p| p + 19)
    else {
        return (s, 0);
    };
    let (fields, offset) = s.split_at(at);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let digits = offset.get(1..).unwrap_or("");
    let hhmm = match digits.len() {
        2 => Some((digits, "00")),
        4 => digits.get(..2).zip(digits.get(2..)),
        5 if digits.get(2..3) == Some(":") => digits.get(..2).zip(digits.get(3..)),
        _ => None,
    };
    let parsed = hhmm.and_then(|(h, m)| {
        let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(h) || !all_digits(m) {
            return None;
        }
        let (h, m) = (h.parse::<i64>().ok()?, m.parse::<i64>().ok()?);
        (h <= 18 && m < 60).then_some(sign * (h * 3600 + m * 60))
    });
    match parsed {
        Some(offset_s) => (fields, offset_s),
        None => (s, 0),
    }
}

/// Milliseconds from 1970-01-01T00:00:00 to `dt`, both read as UTC.
fn civil_ms(dt: civil::DateTime) -> i64 {
    let epoch = civil::date(1970, 1, 1).at(0, 0, 0, 0);
    dt.duration_since(epoch).as_millis() as i64
}

/// A point in time on the command line: an instant, or a duration before
/// the command's now (`now-P1D`, `now-PT15M`; `now` alone is now), which
/// the command resolves with [`When::at`] against its `--now-ms` or the
/// clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    At(i64),
    Before(i64),
}

impl When {
    /// The instant, with `now_ms` as now.
    pub fn at(self, now_ms: i64) -> i64 {
        match self {
            When::At(t) => t,
            When::Before(d) => now_ms.saturating_sub(d),
        }
    }
}

/// Parse a [`When`]: epoch milliseconds, an ISO-8601 date-time, or `now`
/// less an ISO-8601 duration (`now-PT1H`).
pub fn parse_when(s: &str) -> Result<When, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("now") {
        return Ok(When::Before(0));
    }
    match t.get(..4).filter(|p| p.eq_ignore_ascii_case("now-")) {
        Some(_) => parse_duration_ms(&t[4..]).map(When::Before),
        None => parse_instant_ms(t).map(When::At),
    }
}

/// Parse an instant that must not be negative (a `--now-ms`).
pub fn parse_instant_ms_non_negative(s: &str) -> Result<i64, String> {
    let ms = parse_instant_ms(s)?;
    if ms < 0 {
        return Err(format!(
            "{s:?} is before 1970 (epoch ms {ms}): not accepted here"
        ));
    }
    Ok(ms)
}

/// Parse a duration: milliseconds (an integer), or ISO-8601 (see [`parse_duration_ms`]).
pub fn parse_duration_or_ms(s: &str) -> Result<i64, String> {
    match s.trim().parse::<i64>() {
        Ok(ms) => Ok(ms),
        Err(_) => parse_duration_ms(s),
    }
}

/// Parse an ISO-8601 duration (`P1DT2H`, `PT15M`, `-PT1.5S`) into milliseconds.
/// Years, months and weeks are refused, as Java's `Duration.parse` refuses
/// them (their length depends on the calendar).
pub fn parse_duration_ms(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let body = t.trim_start_matches(['+', '-']);
    if !body.starts_with(['P', 'p']) {
        return Err(format!(
            "{s:?} is not an ISO-8601 duration (e.g. P1DT2H, PT30M, PT1.5S)"
        ));
    }
    let upper = body.to_ascii_uppercase();
    let date_part = upper.split('T').next().unwrap_or("");
    if date_part.contains(['Y', 'W']) || date_part.contains('M') {
        return Err(format!(
            "{s:?}: years, months and weeks have no fixed length; give days (D) or hours, minutes, seconds"
        ));
    }
    let span = Span::from_str(t).map_err(|e| format!("{s:?}: {e}"))?;
    let ms = span
        .total((Unit::Millisecond, SpanRelativeTo::days_are_24_hours()))
        .map_err(|e| format!("{s:?}: {e}"))?;
    if !ms.is_finite() || ms.abs() > i64::MAX as f64 {
        return Err(format!("{s:?} is too long"));
    }
    Ok(ms.trunc() as i64)
}

/// `ms` as an ISO-8601 UTC date-time with milliseconds
/// (`2023-11-14T22:13:20.000Z`); a value no date can hold is shown as the number.
pub fn format_iso_ms(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Err(_) => ms.to_string(),
    }
}

/// A duration for people: its two largest units of days, hours, minutes,
/// seconds and milliseconds (`1157d 9h`, `15m`, `8h 0m`, `1.5s` is `1s 500ms`);
/// a negative one with a leading `-`.
pub fn human_duration_ms(ms: i64) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
        ("ms", 1),
    ];
    let sign = if ms < 0 { "-" } else { "" };
    let mut rest = ms.unsigned_abs();
    if rest == 0 {
        return "0ms".into();
    }
    let Some(first) = UNITS.iter().position(|&(_, size)| rest >= size) else {
        return "0ms".into();
    };
    let mut parts = Vec::new();
    for &(name, size) in UNITS.iter().skip(first).take(2) {
        parts.push(format!("{}{name}", rest / size));
        rest %= size;
    }
    // "15m 0s" says no more than "15m".
    if parts.get(1).is_some_and(|p| p.starts_with('0')) {
        parts.pop();
    }
    format!("{sign}{}", parts.join(" "))
}

#[cfg(test)]
mod tests {

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human_duration_ms(900_000), "15m");
        assert_eq!(human_duration_ms(28_856_273_023), "333d 23h");
        assert_eq!(human_duration_ms(8 * 3_600_000 + 23_000), "8h");
        assert_eq!(human_duration_ms(8 * 3_600_000 + 61_000), "8h 1m");
        assert_eq!(human_duration_ms(1_500), "1s 500ms");
        assert_eq!(human_duration_ms(7), "7ms");
        assert_eq!(human_duration_ms(0), "0ms");
        assert_eq!(human_duration_ms(-90_000), "-1m 30s");
        assert_eq!(human_duration_ms(i64::MIN), "-106751991167d 7h");
    }

    use super::*;

    // 1700000000000 ms is 2023-11-14T22:13:20Z: 19675 days (1970-01-01 to
    // 2023-11-14) * 86400 s + 22*3600 + 13*60 + 20 s = 1700000000 s.
    #[test]
    fn instants() {
        assert_eq!(19675 * 86_400 + 22 * 3600 + 13 * 60 + 20, 1_700_000_000);
        for s in [
            "1700000000000",
            "2023-11-14T22:13:20Z",
            "2023-11-14T22:13:20.000Z",
            "2023-11-14T22:13:20",
            "2023-11-14T22:13:20.000",
            "2023-11-15T00:13:20+02:00",
            "2023-11-15T00:13:20.000+0200",
            "2023-11-14T20:13:20-02:00",
        ] {
            assert_eq!(parse_instant_ms(s), Ok(1_700_000_000_000), "{s}");
        }
        assert_eq!(
            parse_instant_ms("2023-11-14T22:13:20.5Z"),
            Ok(1_700_000_000_500)
        );
        assert_eq!(parse_instant_ms("-1"), Ok(-1));
        assert!(parse_instant_ms("yesterday").is_err());
        assert!(parse_instant_ms("2023-13-01T00:00:00Z").is_err());
        assert!(parse_instant_ms_non_negative("1969-12-31T23:59:59Z").is_err());
    }

    // 9999-12-31T23:59:59.999Z is 253402300799999 ms (Java's
    // `Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli()`): 2932897
    // days from 1970-01-01 to 10000-01-01, less one millisecond.
    // -009999-01-01 (ISO 8601 signed years) is 25 Gregorian cycles of 146097 days before 0001-01-01,
    // which is 719162 days before 1970-01-01.
    #[test]
    fn the_last_millisecond_of_year_9999_is_an_instant() {
        assert_eq!(2_932_897_i64 * 86_400_000 - 1, 253_402_300_799_999);
        assert_eq!(
            (25 * 146_097 + 719_162_i64) * 86_400_000,
            377_705_116_800_000
        );
        for s in [
            "9999-12-31T23:59:59.999Z",
            "9999-12-31T23:59:59.999",
            "9999-12-31T23:59:59.999+00:00",
            "9999-12-31T23:59:59.999-00:00",
        ] {
            assert_eq!(parse_instant_ms(s), Ok(253_402_300_799_999), "{s}");
        }
        assert_eq!(
            parse_instant_ms("9999-12-31T23:59:59-01:00"),
            Ok(253_402_300_799_000 + 3_600_000)
        );
        assert_eq!(
            parse_instant_ms("-009999-01-01T00:00:00Z"),
            Ok(-377_705_116_800_000)
        );
        assert!(parse_instant_ms("9999-12-31T23:59:59+25:00").is_err());
        assert!(parse_instant_ms("9999-12-32T00:00:00Z").is_err());
    }

    #[test]
    fn a_time_is_an_instant_or_a_duration_before_now() {
        assert_eq!(parse_when("1700000000000"), Ok(When::At(1_700_000_000_000)));
        assert_eq!(
            parse_when("2023-11-14T22:13:20Z"),
            Ok(When::At(1_700_000_000_000))
        );
        assert_eq!(parse_when("now-PT1H"), Ok(When::Before(3_600_000)));
        assert_eq!(
            parse_when("NOW-P1D").map(|w| w.at(100_000_000)),
            Ok(100_000_000 - 86_400_000)
        );
        assert_eq!(parse_when("now").map(|w| w.at(5)), Ok(5));
        assert!(parse_when("now-1h").is_err());
        assert!(parse_when("now+PT1H").is_err());
        assert_eq!(When::Before(10).at(i64::MIN), i64::MIN);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("P1DT2H"), Ok((24 + 2) * 3_600_000));
        assert_eq!(parse_duration_ms("PT15M"), Ok(15 * 60_000));
        assert_eq!(parse_duration_ms("PT1.5S"), Ok(1500));
        assert_eq!(parse_duration_ms("pt10s"), Ok(10_000));
        assert_eq!(parse_duration_ms("-PT1H"), Ok(-3_600_000));
        assert_eq!(parse_duration_ms("P2D"), Ok(2 * 86_400_000));
        assert_eq!(parse_duration_or_ms("60000"), Ok(60_000));
        assert_eq!(parse_duration_or_ms("PT1M"), Ok(60_000));
        for bad in ["P1M", "P1Y", "P1W", "1h", "", "P"] {
            assert!(parse_duration_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn iso_output() {
        assert_eq!(format_iso_ms(1_700_000_000_000), "2023-11-14T22:13:20.000Z");
        assert_eq!(format_iso_ms(1_700_000_000_042), "2023-11-14T22:13:20.042Z");
        assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_iso_ms(i64::MAX), i64::MAX.to_string());
    }
}
