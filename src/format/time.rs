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

use jiff::{civil, tz::Offset, Span, SpanRelativeTo, Timestamp, Unit};

/// Parse an instant: epoch milliseconds, or an ISO-8601 date-time.
pub fn parse_instant_ms(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    if let Ok(t) = Timestamp::from_str(s) {
        return Ok(t.as_millisecond());
    }
    // A date-time that parses field by field but not as an instant lies
    // outside the instants klog can represent: say which ones it reads
    // rather than the date library's own words.
    let out_of_range = || {
        format!(
            "{s:?} is outside the date-times klog reads ({} to {}, UTC); \
             give epoch milliseconds for an instant beyond them",
            Timestamp::from_second(Timestamp::MIN.as_second() + 1).unwrap_or(Timestamp::MIN),
            Timestamp::from_second(Timestamp::MAX.as_second()).unwrap_or(Timestamp::MAX),
        )
    };
    // The date and time fields, and after them an offset (and fraction).
    let fields = s.get(..19).filter(|f| civil::DateTime::from_str(f).is_ok());
    let offset_after = s.get(19..).is_some_and(|rest| {
        let rest = rest
            .strip_prefix('.')
            .map_or(rest, |r| r.trim_start_matches(|c: char| c.is_ascii_digit()));
        rest.eq_ignore_ascii_case("z")
            || (rest.len() == 6
                && rest.starts_with(['+', '-'])
                && rest.get(3..4) == Some(":")
                && rest.chars().filter(char::is_ascii_digit).count() == 4)
    });
    match civil::DateTime::from_str(s) {
        // No offset: UTC, as Kafka's Utils.getDateTime reads it.
        Ok(dt) => Offset::UTC
            .to_timestamp(dt)
            .map(|t| t.as_millisecond())
            .map_err(|_| out_of_range()),
        Err(_) if fields.is_some() && offset_after => Err(out_of_range()),
        Err(e) => Err(format!(
            "{s:?} is neither epoch milliseconds nor an ISO-8601 date-time \
             (e.g. 2026-01-30T17:00:00Z, 2026-01-30T18:00:00.000+01:00): {e}"
        )),
    }
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
