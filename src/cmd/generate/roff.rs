//! The man pages' prose is written in a small subset of Markdown (the
//! files in `pages/`) and turned into roff here: `# ` and `## ` headings,
//! paragraphs, `- ` and `1. ` list items (continued by indented lines),
//! fenced code blocks, pipe tables, and inline `code` and **bold**.

/// Escape text for roff: backslashes and dashes everywhere, a leading dot
/// or quote (which would start a request), and every non-ASCII character
/// as a groff Unicode escape, so the page reads the same in any locale.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c if c.is_ascii() => out.push(c),
            c => out.push_str(&format!("\\[u{:04X}]", c as u32)),
        }
    }
    protect_line_start(&out)
}

/// `\&` before a line that would otherwise start with `.` or `'`.
fn protect_line_start(s: &str) -> String {
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s.to_string()
    }
}

/// Inline markup of a block of text: `code` and **bold** in bold, the rest
/// escaped; every output line protected against starting a request.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut bold = false;
    let mut code = false;
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    let flush = |plain: &mut String, out: &mut String| {
        let escaped: String = plain
            .chars()
            .map(|c| match c {
                '\\' => "\\e".to_string(),
                '-' => "\\-".to_string(),
                c if c.is_ascii() => c.to_string(),
                c => format!("\\[u{:04X}]", c as u32),
            })
            .collect();
        out.push_str(&escaped);
        plain.clear();
    };
    while let Some(c) = chars.next() {
        if c == '`' {
            flush(&mut plain, &mut out);
            out.push_str(if code { "\\fR" } else { "\\fB" });
            code = !code;
        } else if c == '*' && !code && chars.peek() == Some(&'*') {
            chars.next();
            flush(&mut plain, &mut out);
            out.push_str(if bold { "\\fR" } else { "\\fB" });
            bold = !bold;
        } else {
            plain.push(c);
        }
    }
    flush(&mut plain, &mut out);
    if code || bold {
        out.push_str("\\fR");
    }
    out.lines()
        .map(|l| protect_line_start(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One pipe-table row's cells.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

/// A pipe table: two columns become a tagged list (the first cell the
/// tag), wider ones a tbl(1) table whose cells are text blocks.
fn table(rows: &[&str], roff: &mut String) {
    let mut rows: Vec<Vec<String>> = rows.iter().map(|r| cells(r)).collect();
    if rows.len() > 1 && rows[1].iter().all(|c| c.chars().all(|c| "-:".contains(c))) {
        rows.remove(1);
    }
    let Some(head) = rows.first().cloned() else {
        return;
    };
    if head.len() == 2 {
        roff.push_str(&format!(
            ".PP\n{}: {}\n",
            inline(&format!("**{}**", head[0])),
            inline(&format!("**{}**", head[1]))
        ));
        for row in &rows[1..] {
            let cell = |i: usize| row.get(i).map(String::as_str).unwrap_or("");
            roff.push_str(&format!(".TP\n{}\n{}\n", inline(cell(0)), inline(cell(1))));
        }
        return;
    }
    // A column of short cells takes its width from them; the others share
    // what is left, their cells text blocks that wrap.
    let short: Vec<bool> = (0..head.len())
        .map(|c| {
            rows.iter()
                .all(|r| r.get(c).map_or(0, |t| t.chars().count()) <= 24)
        })
        .collect();
    let format: Vec<&str> = short.iter().map(|s| if *s { "l" } else { "lx" }).collect();
    roff.push_str(&format!(".PP\n.TS\nallbox;\n{}.\n", format.join(" ")));
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = (0..head.len())
            .map(|c| {
                let text = row.get(c).map(String::as_str).unwrap_or("");
                let text = if i == 0 {
                    format!("**{text}**")
                } else {
                    text.to_string()
                };
                if short[c] {
                    inline(&text)
                } else {
                    format!("T{{\n{}\nT}}", inline(&text))
                }
            })
            .collect();
        roff.push_str(&line.join("\t"));
        roff.push('\n');
    }
    roff.push_str(".TE\n.sp\n");
}

/// A heading's roff: `# ` a section (upper case), `## ` a subsection.
fn heading(line: &str) -> Option<String> {
    if let Some(h) = line.strip_prefix("# ") {
        Some(format!(".SH \"{}\"\n", escape(&h.to_uppercase())))
    } else {
        line.strip_prefix("## ")
            .map(|h| format!(".SS \"{}\"\n", escape(h)))
    }
}

/// A list item's marker and text: `- text` or `1. text`.
fn list_item(line: &str) -> Option<(String, &str)> {
    if let Some(rest) = line.strip_prefix("- ") {
        return Some(("\\(bu 2".to_string(), rest));
    }
    let (num, rest) = line.split_once(". ")?;
    (!num.is_empty() && num.chars().all(|c| c.is_ascii_digit()))
        .then(|| (format!("{num}. 4"), rest))
}

/// The Markdown subset of `pages/` as roff: left-aligned and not
/// hyphenated, so that option names and paths stay whole.
pub fn from_markdown(md: &str) -> String {
    let mut roff = String::from(".nh\n.ad l\n");
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            i += 1;
        } else if let Some(h) = heading(line) {
            roff.push_str(&h);
            i += 1;
        } else if line.starts_with("```") {
            roff.push_str(".PP\n.RS 4\n.nf\n");
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                roff.push_str(&escape(lines[i]));
                roff.push('\n');
                i += 1;
            }
            roff.push_str(".fi\n.RE\n");
            i += 1;
        } else if line.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].starts_with('|') {
                i += 1;
            }
            table(&lines[start..i], &mut roff);
        } else if let Some((marker, first)) = list_item(line) {
            let mut text = first.to_string();
            i += 1;
            while i < lines.len() && lines[i].starts_with("  ") {
                text.push('\n');
                text.push_str(lines[i].trim());
                i += 1;
            }
            roff.push_str(&format!(".IP {marker}\n{}\n", inline(&text)));
        } else {
            let mut text = String::new();
            while i < lines.len() {
                let l = lines[i];
                if l.trim().is_empty()
                    || heading(l).is_some()
                    || l.starts_with("```")
                    || l.starts_with('|')
                    || list_item(l).is_some()
                {
                    break;
                }
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(l.trim());
                i += 1;
            }
            roff.push_str(&format!(".PP\n{}\n", inline(&text)));
        }
    }
    roff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_requests() {
        let roff = from_markdown(
            "# Title\n\nA `--flag` and **bold**\n.dot line\n\n- one\n  more\n- two\n\n1. first\n\n```\n$ klog -x\n```\n",
        );
        assert_eq!(
            roff,
            ".nh\n.ad l\n.SH \"TITLE\"\n.PP\nA \\fB\\-\\-flag\\fR and \\fBbold\\fR\n\\&.dot line\n\
             .IP \\(bu 2\none\nmore\n.IP \\(bu 2\ntwo\n.IP 1. 4\nfirst\n\
             .PP\n.RS 4\n.nf\n$ klog \\-x\n.fi\n.RE\n"
        );
    }

    #[test]
    fn tables_and_unicode() {
        let two = from_markdown("| a | b |\n|---|---|\n| `x` | y — z |\n");
        assert_eq!(
            two,
            ".nh\n.ad l\n.PP\n\\fBa\\fR: \\fBb\\fR\n.TP\n\\fBx\\fR\ny \\[u2014] z\n"
        );
        let long = "a cell of more than twenty-four characters";
        let three = from_markdown(&format!(
            "| a | b | c |\n|---|---:|---|\n| 1 | {long} | 3 |\n"
        ));
        assert!(
            three.starts_with(
                ".nh\n.ad l\n.PP\n.TS\nallbox;\nl lx l.\n\\fBa\\fR\tT{\n\\fBb\\fR\nT}\t\\fBc\\fR\n"
            ),
            "{three}"
        );
        assert!(
            three.ends_with(
                "1\tT{\na cell of more than twenty\\-four characters\nT}\t3\n.TE\n.sp\n"
            ),
            "{three}"
        );
    }
}
