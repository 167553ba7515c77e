//! How numbers become pictures: the scales and colours of `klog report`,
//! each a small pure function so that the rule is stated once and tested.
//!
//! - Offsets map to x linearly: `x(o) = x0 + (o − lo) · (x1 − x0) / (hi − lo)`,
//!   where `lo..hi` is the partition's offset range drawn (its first
//!   segment's base offset or log start, whichever is lower, to the highest
//!   end shown) and `x0..x1` the strip's pixels; offsets outside the range
//!   are clamped to its ends. Positions are written with one decimal.
//!   Axis ticks fall on round offsets (1, 2 or 5 times a power of ten
//!   apart, at most [`MAX_TICKS`] of them); a bar narrower than a few
//!   pixels is drawn [`MIN_BAR`] wide, so that a transaction of one offset
//!   on a strip of millions stays visible.
//! - Lag maps to a colour: no lag (0 or less) is green, `hsl(120,45%,40%)`;
//!   a positive lag is `hsl(h,80%,l%)` with `f = min(1, lag / max(max,
//!   LAG_FLOOR))`, `h = 60 · (1 − f)` and `l = 86 − 36 · f`, each rounded
//!   to a whole number, where `max` is the largest lag of the heatmap: a
//!   linear scale from pale yellow to the alarm red `hsl(0,80%,50%)`, the
//!   largest lag alone red, and no lag below [`LAG_FLOOR`] records more
//!   than pale orange however small the others are (lag 2 next to 216 is
//!   pale yellow, not warm). An unknown lag (no partition, lost) is grey,
//!   `#9e9e9e`.
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

    /// `x="…" width="…"` of the bar of offsets `from..to`, at least
    /// [`MIN_BAR`] wide (widened to the right, or to the left at the
    /// strip's end).
    pub fn bar(&self, from: i64, to: i64) -> String {
        let (mut x, w) = (self.x(from), (self.x(to) - self.x(from)).max(MIN_BAR));
        if x + w > self.x1 {
            x = (self.x1 - w).max(self.x0.min(x));
        }
        format!("x=\"{x:.1}\" width=\"{w:.1}\"")
    }

    /// Round offsets to tick the axis with: every multiple of a step of
    /// 1, 2 or 5 times a power of ten in `lo..=hi`, the smallest step that
    /// gives at most [`MAX_TICKS`].
    pub fn ticks(&self) -> Vec<i64> {
        let span = i128::from(self.hi) - i128::from(self.lo);
        let mut step: i128 = 1;
        'find: loop {
            for m in [1, 2, 5] {
                if span / (step * m) < MAX_TICKS as i128 {
                    step *= m;
                    break 'find;
                }
            }
            step *= 10;
        }
        let first = i128::from(self.lo).div_euclid(step) * step;
        let first = if first < i128::from(self.lo) {
            first + step
        } else {
            first
        };
        (0..)
            .map(|k| first + k * step)
            .take_while(|&o| o <= i128::from(self.hi))
            .filter_map(|o| i64::try_from(o).ok())
            .collect()
    }
}

/// The narrowest a bar (a transaction, damage, a loss) is drawn, in pixels.
pub const MIN_BAR: f64 = 6.0;
/// The most ticks on an offset axis.
pub const MAX_TICKS: usize = 10;
/// Below this many records, no lag is coloured as more than a fraction of
/// the alarm red.
pub const LAG_FLOOR: i64 = 1000;

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
            let f = (l as f64 / max.max(LAG_FLOOR) as f64).min(1.0);
            let h = (60.0 * (1.0 - f)).round() as i64;
            let light = (86.0 - 36.0 * f).round() as i64;
            format!("hsl({h},80%,{light}%)")
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
    fn lag_colours_follow_the_linear_rule_with_a_floor() {
        assert_eq!(lag_colour(Some(0), 100), NO_LAG);
        assert_eq!(lag_colour(Some(-3), 100), NO_LAG);
        assert_eq!(lag_colour(None, 100), UNKNOWN);
        // The largest lag above the floor is the alarm red.
        assert_eq!(lag_colour(Some(5000), 5000), "hsl(0,80%,50%)");
        // Half of it: hue 30, lightness 68.
        assert_eq!(lag_colour(Some(2500), 5000), "hsl(30,80%,68%)");
        // Below the floor, on the floor's scale: 216 of 1000 is pale,
        // 2 paler still (f = 0.002: hue 60, lightness 86).
        assert_eq!(lag_colour(Some(216), 216), "hsl(47,80%,78%)");
        assert_eq!(lag_colour(Some(2), 216), "hsl(60,80%,86%)");
        // A lag above the stated max is clamped to red.
        assert_eq!(lag_colour(Some(50_000), 10), "hsl(0,80%,50%)");
    }

    #[test]
    fn bars_are_at_least_min_bar_wide() {
        let s = Scale::new(0, 1_000_000, 0.0, 100.0);
        assert_eq!(s.bar(10, 11), "x=\"0.0\" width=\"6.0\"");
        // At the strip's end, widened to the left.
        assert_eq!(s.bar(1_000_000, 1_000_000), "x=\"94.0\" width=\"6.0\"");
        assert_eq!(s.bar(0, 500_000), "x=\"0.0\" width=\"50.0\"");
    }

    #[test]
    fn ticks_fall_on_round_offsets() {
        let t = |lo, hi| Scale::new(lo, hi, 0.0, 1.0).ticks();
        assert_eq!(t(0, 12), vec![0, 2, 4, 6, 8, 10, 12]);
        assert_eq!(t(0, 339), vec![0, 50, 100, 150, 200, 250, 300]);
        assert_eq!(t(7, 9), vec![7, 8, 9]);
        assert_eq!(t(95, 1234).first(), Some(&200));
        assert!(t(i64::MIN, i64::MAX).len() <= MAX_TICKS);
    }

    #[test]
    fn epochs_get_distinct_hues() {
        assert_eq!(epoch_colour(0), "hsl(210,55%,62%)");
        assert_eq!(epoch_colour(1), "hsl(277,55%,62%)");
        assert_eq!(epoch_colour(3), "hsl(51,55%,62%)"); // 411 mod 360
        assert_eq!(epoch_colour(-1), "hsl(143,55%,62%)"); // legacy messages
    }
}
