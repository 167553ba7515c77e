//! How numbers become pictures: the scales and colours of `klog report`,
//! each a small pure function so that the rule is stated once and tested.
//!
//! - Offsets map to x linearly: `x(o) = x0 + (o − lo) · (x1 − x0) / (hi − lo)`,
//!   where `lo..hi` is the partition's offset range drawn (its first
//!   segment's base offset or log start, whichever is lower, to the highest
//!   end shown) and `x0..x1` the strip's pixels; offsets outside the range
//!   are clamped to its ends. Positions are written with one decimal.
//! - Lag maps to a colour: no lag (0 or less) is green, `hsl(120,45%,40%)`;
//!   a positive lag is `hsl(h,75%,50%)` with `h = 50 · (1 − f)` rounded to a
//!   whole degree, `f = ln(1 + lag) / ln(1 + max)` where `max` is the
//!   largest lag of the heatmap: yellow for the smallest lags, red for the
//!   largest; a logarithmic scale, since lags span orders of magnitude. An
//!   unknown lag (no partition, lost) is grey, `#9e9e9e`.
//! - A leader epoch gets a hue of its own: `(210 + epoch · 67) mod 360`
//!   (epoch 0 blue), so
//!   neighbouring epochs differ visibly and the same epoch has the same
//!   colour on every replica.

/// A linear map from offsets to pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub lo: i64,
    pub hi: i64,
    pub x0: f64,
    pub x1: f64,
}

impl Scale {
    /// Offsets `lo..hi` onto pixels `x0..x1` (a range of one offset when
    /// `hi <= lo`).
    pub fn new(lo: i64, hi: i64, x0: f64, x1: f64) -> Self {
        Scale {
            lo,
            hi: hi.max(lo.saturating_add(1)),
            x0,
            x1,
        }
    }

    /// The x of `offset`, clamped to the strip.
    pub fn x(&self, offset: i64) -> f64 {
        let o = offset.clamp(self.lo, self.hi);
        // Differences in i128: offsets near i64::MAX are not exact as f64.
        let span = (i128::from(self.hi) - i128::from(self.lo)) as f64;
        let at = (i128::from(o) - i128::from(self.lo)) as f64;
        self.x0 + at * (self.x1 - self.x0) / span
    }

    /// [`x`](Self::x) as written in the SVG (one decimal).
    pub fn px(&self, offset: i64) -> String {
        format!("{:.1}", self.x(offset))
    }

    /// The width from `from` to `to` (at least 1 pixel, so that a batch of
    /// one offset on a long strip stays visible).
    pub fn width(&self, from: i64, to: i64) -> String {
        format!("{:.1}", (self.x(to) - self.x(from)).max(1.0))
    }
}

/// The green of no lag.
pub const NO_LAG: &str = "hsl(120,45%,40%)";
/// The grey of an unknown lag.
pub const UNKNOWN: &str = "#9e9e9e";

/// The colour of `lag` in a heatmap whose largest lag is `max`.
pub fn lag_colour(lag: Option<i64>, max: i64) -> String {
    match lag {
        None => UNKNOWN.to_string(),
        Some(l) if l <= 0 => NO_LAG.to_string(),
        Some(l) => {
            let max = max.max(l);
            let f = (1.0 + l as f64).ln() / (1.0 + max as f64).ln();
            let h = (50.0 * (1.0 - f)).round() as i64;
            format!("hsl({h},75%,50%)")
        }
    }
}

/// The colour of a leader epoch.
pub fn epoch_colour(epoch: i32) -> String {
    let h = (210 + i64::from(epoch) * 67).rem_euclid(360);
    format!("hsl({h},55%,62%)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_linearly_onto_the_strip() {
        let s = Scale::new(0, 100, 100.0, 900.0);
        // 8 pixels per offset from x = 100.
        assert_eq!(s.x(0), 100.0);
        assert_eq!(s.x(50), 500.0);
        assert_eq!(s.x(100), 900.0);
        assert_eq!(s.px(15), "220.0");
        // Clamped at both ends.
        assert_eq!(s.x(-5), 100.0);
        assert_eq!(s.x(1_000), 900.0);
        // A range that does not start at 0: offset 90 of 80..120 is a quarter in.
        let s = Scale::new(80, 120, 0.0, 400.0);
        assert_eq!(s.x(90), 100.0);
        assert_eq!(s.width(90, 100), "100.0");
        // A thin span stays visible.
        let s = Scale::new(0, 1_000_000, 0.0, 100.0);
        assert_eq!(s.width(10, 11), "1.0");
    }

    #[test]
    fn an_empty_range_is_one_offset_wide() {
        let s = Scale::new(7, 7, 0.0, 10.0);
        assert_eq!(s.x(7), 0.0);
        assert_eq!(s.x(8), 10.0);
    }

    #[test]
    fn offsets_beyond_f64_precision_stay_ordered() {
        let s = Scale::new(i64::MAX - 10, i64::MAX, 0.0, 10.0);
        assert_eq!(s.x(i64::MAX - 10), 0.0);
        assert_eq!(s.x(i64::MAX - 5), 5.0);
        assert_eq!(s.x(i64::MAX), 10.0);
        assert_eq!(s.x(i64::MIN), 0.0);
        let s = Scale::new(i64::MIN, i64::MAX, 0.0, 10.0);
        assert_eq!(s.x(0), 5.0);
    }

    #[test]
    fn lag_colours_follow_the_logarithmic_rule() {
        assert_eq!(lag_colour(Some(0), 100), NO_LAG);
        assert_eq!(lag_colour(Some(-3), 100), NO_LAG);
        assert_eq!(lag_colour(None, 100), UNKNOWN);
        // The largest lag is red (hue 0).
        assert_eq!(lag_colour(Some(100), 100), "hsl(0,75%,50%)");
        // lag 9 of max 99: f = ln 10 / ln 100 = 1/2, hue 25.
        assert_eq!(lag_colour(Some(9), 99), "hsl(25,75%,50%)");
        // lag 1 of max 1023: f = ln 2 / ln 1024 = 1/10, hue 45.
        assert_eq!(lag_colour(Some(1), 1023), "hsl(45,75%,50%)");
        // A lag above the stated max is clamped to red.
        assert_eq!(lag_colour(Some(500), 10), "hsl(0,75%,50%)");
    }

    #[test]
    fn epochs_get_distinct_hues() {
        assert_eq!(epoch_colour(0), "hsl(210,55%,62%)");
        assert_eq!(epoch_colour(1), "hsl(277,55%,62%)");
        assert_eq!(epoch_colour(3), "hsl(51,55%,62%)"); // 411 mod 360
        assert_eq!(epoch_colour(-1), "hsl(143,55%,62%)"); // legacy messages
    }
}
