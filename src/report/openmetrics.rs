//! OpenMetrics text, the exposition format Prometheus scrapes and
//! node_exporter's textfile collector reads: for each metric a `# TYPE`
//! and `# HELP` line, then one sample a line, `name{label="value",...}
//! value`, and `# EOF` at the end. Label values escape `\\`, `"` and line
//! feeds as the format says; names come from the command, never the data.

/// One gauge and its samples.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: &'static str,
    pub help: &'static str,
    /// Each sample's labels (name, value) and value.
    pub samples: Vec<(Vec<(&'static str, String)>, i64)>,
}

/// The metrics as OpenMetrics text; a metric without samples is left out.
pub fn render(metrics: &[Metric]) -> String {
    let mut out = String::new();
    for m in metrics.iter().filter(|m| !m.samples.is_empty()) {
        out.push_str(&format!(
            "# TYPE {} gauge\n# HELP {} {}\n",
            m.name, m.name, m.help
        ));
        for (labels, value) in &m.samples {
            let labels: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            out.push_str(&format!("{}{{{}}} {value}\n", m.name, labels.join(",")));
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A label value escaped: backslash, double quote and line feed.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_escape_their_label_values_and_the_text_ends_with_eof() {
        let m = Metric {
            name: "kafka_consumergroup_group_lag",
            help: "lag",
            samples: vec![(vec![("group", "a\"b\\c\nd".to_string())], 7)],
        };
        assert_eq!(
            render(&[m]),
            "# TYPE kafka_consumergroup_group_lag gauge\n# HELP kafka_consumergroup_group_lag lag\n\
             kafka_consumergroup_group_lag{group=\"a\\\"b\\\\c\\nd\"} 7\n# EOF\n"
        );
    }
}
