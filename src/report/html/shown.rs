//! A name from the data as the page shows it, made once where it enters
//! the report: bounded ([`kaen_log::format::escape::bounded`]: a 32 KB
//! group id is its first characters, its length and its hash) and escaped
//! ([`esc`]). The renderer writes it as it is wherever the name appears,
//! instead of escaping a copy of the whole name at each use: a name costs
//! the page the same few hundred bytes however long it is.

use std::sync::Arc;

use super::esc;

/// A bounded, escaped name; cheap to clone. Names sort by their bounded
/// text, as they read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Shown {
    text: Arc<str>,
    html: Arc<str>,
}

impl Shown {
    /// `raw`, bounded and escaped.
    pub fn new(raw: &str) -> Self {
        let text = kaen_log::format::escape::bounded(raw);
        Shown {
            html: esc(&text).into(),
            text: text.into(),
        }
    }
}

impl std::fmt::Display for Shown {
    /// The HTML form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.html)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_name_is_bounded_and_escaped_once() {
        let s = Shown::new(&"<".repeat(32767)).to_string();
        assert!(s.len() < 1024, "{}", s.len());
        assert!(s.starts_with("&lt;&lt;"));
        assert!(s.contains("(32767 bytes, sha256 "));
        assert_eq!(Shown::new("a<b").to_string(), "a&lt;b");
        // Sorted as they read, not as they are escaped.
        assert!(Shown::new("a<b") < Shown::new("a=b"));
    }
}
