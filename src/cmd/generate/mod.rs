//! `klog completions` and the hidden `klog generate man DIR`, both built
//! from the clap definitions so they cannot drift from `--help`.

use std::path::PathBuf;

use anyhow::Context;

use crate::exit::Outcome;
use crate::report::Output;

pub mod json_schema;
mod page_text;
mod roff;

use page_text::{EXAMPLES, SEE_ALSO, TOPICS};

use crate::cmd::Declared;

/// Print shell completions for klog.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Generate man pages (klog.1, one page per subcommand, klog-records.7 and
/// the topic pages of section 7) into a folder, the JSON Schema of every command's `--format json`
/// document, or (`tables`) the record schemas klog decodes as JSON
/// (`record-tables.json`, for tests/kafka/schemas.sh).
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// What to generate: `man`, `schema` or `tables`.
    #[arg(value_parser = ["man", "schema", "tables"])]
    pub what: String,
    /// Output folder.
    pub dir: PathBuf,
}

/// `cli`: klog's whole command line, from the parser's definition.
pub fn run_completions(
    args: &CompletionsArgs,
    cli: clap::Command,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    // The hidden `generate` builds the man pages; it is not for users'
    // shells, so it is left out of the completions.
    clap_complete::generate(args.shell, &mut completions_command(cli), "klog", out);
    Ok(Outcome::Clean)
}

/// klog's command line without its hidden subcommands.
fn completions_command(full: clap::Command) -> clap::Command {
    let visible: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut cmd = clap::Command::new("klog")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true);
    for sub in visible {
        cmd = cmd.subcommand(sub);
    }
    cmd
}

/// `cli`: klog's whole command line, from the parser's definition;
/// `commands`: what each subcommand declares beside it.
pub fn run(
    args: &GenerateArgs,
    (cli, commands): (clap::Command, &[Declared]),
    _out: &mut Output,
) -> anyhow::Result<Outcome> {
    std::fs::create_dir_all(&args.dir).with_context(|| format!("create {}", args.dir.display()))?;
    match args.what.as_str() {
        "schema" => json_schema::write_all(&args.dir, commands)?,
        "tables" => {
            let path = args.dir.join("record-tables.json");
            let mut text = serde_json::to_string_pretty(&kaen_log::inspect::catalog::document())?;
            text.push('\n');
            std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
        }
        _ => man_pages(cli, commands, &args.dir)?,
    }
    Ok(Outcome::Clean)
}

/// Escape text for roff.
fn roff_text(s: &str) -> String {
    roff::escape(s)
}

/// A subcommand's SYNOPSIS line with a placeholder for every value
/// (`[--group GROUP]`), which clap_mangen leaves out (`[--group]`).
fn synopsis(name: &str, cmd: &clap::Command) -> String {
    let mut line = format!("\\fBklog {}\\fR", roff_text(name));
    let placeholder = |a: &clap::Arg| {
        let names: Vec<String> = a
            .get_value_names()
            .map(|v| v.iter().map(|n| n.to_string()).collect())
            .unwrap_or_else(|| vec![a.get_id().as_str().to_uppercase()]);
        names
            .iter()
            .map(|n| format!("\\fI{}\\fR", roff_text(n)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let repeats = |a: &clap::Arg| matches!(a.get_action(), clap::ArgAction::Append);
    // Options first, then the positional arguments, as clap's usage has them.
    let (positional, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .partition(|a| a.is_positional());
    for a in options.into_iter().chain(positional) {
        let takes_value = a.get_action().takes_values();
        let item = if a.is_positional() {
            format!("<{}>", placeholder(a))
        } else {
            let mut spellings = Vec::new();
            if let Some(c) = a.get_short() {
                spellings.push(format!("\\fB\\-{c}\\fR"));
            }
            if let Some(l) = a.get_long() {
                spellings.push(format!("\\fB\\-\\-{}\\fR", roff_text(l)));
            }
            let mut item = spellings.join("|");
            if takes_value {
                item.push(' ');
                item.push_str(&placeholder(a));
            }
            item
        };
        let item = if repeats(a) {
            format!("{item}...")
        } else {
            item
        };
        line.push(' ');
        if a.is_required_set() {
            line.push_str(&item);
        } else {
            line.push_str(&format!("[{item}]"));
        }
    }
    line
}

/// `roff` with the line after `.SH SYNOPSIS` replaced by `line`.
fn with_synopsis(roff: &str, line: &str) -> String {
    let head = ".SH SYNOPSIS\n";
    let Some(start) = roff.find(head).map(|i| i + head.len()) else {
        return roff.to_string();
    };
    let end = roff[start..].find('\n').map_or(roff.len(), |i| start + i);
    format!("{}{line}{}", &roff[..start], &roff[end..])
}

/// The sections clap does not write: DETAILS, EXIT STATUS, EXAMPLES,
/// SEE ALSO; what a subcommand declares, or for klog(1) and
/// `completions` what [`page_text`] holds.
fn extra_sections(name: &str, commands: &[Declared]) -> String {
    let declared = commands.iter().find(|c| c.name == name);
    let mut roff = String::new();
    if let Some(text) = declared.and_then(|c| c.details) {
        roff.push_str(".SH DETAILS\n");
        roff.push_str(&roff::from_markdown(text));
    }
    roff.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in [
        ("0", "the command ran and found nothing wrong"),
        ("1", "the command ran and found problems (damage, lag over a threshold, findings at or above --fail-on)"),
        ("2", "the command could not do its job: bad arguments, unreadable input, a held lock, an I/O error"),
    ] {
        roff.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff_text(meaning)));
    }
    let examples = declared
        .map(|c| c.examples)
        .or_else(|| EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, e)| *e))
        .unwrap_or(&[]);
    if !examples.is_empty() {
        roff.push_str(".SH EXAMPLES\n");
        for (cmd, what) in examples {
            roff.push_str(&format!(
                ".TP\n\\fB{}\\fR\n{}\n",
                roff_text(cmd),
                roff_text(what)
            ));
        }
    }
    let see_also = declared
        .map(|c| c.see_also)
        .or_else(|| SEE_ALSO.iter().find(|(n, _)| *n == name).map(|(_, p)| *p));
    let related: Vec<String> = match see_also {
        Some(pages) => std::iter::once("klog(1)".to_string())
            .chain(pages.iter().map(|p| match p.strip_suffix("(7)") {
                Some(page) => format!("klog\\-{}(7)", roff_text(page)),
                None => format!("klog\\-{}(1)", roff_text(p)),
            }))
            .collect(),
        // klog(1): every subcommand's page and every topic page.
        None => commands
            .iter()
            .map(|c| c.name)
            .chain(["completions"])
            .map(|n| format!("klog\\-{}(1)", roff_text(n)))
            .chain(
                TOPICS
                    .iter()
                    .map(|(n, _, _)| *n)
                    .chain(["records"])
                    .map(|n| format!("klog\\-{}(7)", roff_text(n))),
            )
            .collect(),
    };
    roff.push_str(".SH \"SEE ALSO\"\n");
    roff.push_str(&related.join(", "));
    roff.push('\n');
    roff
}

/// klog.1 and one page per visible subcommand: clap's sections (without
/// the Markdown backticks of the doc comments), then EXIT STATUS,
/// EXAMPLES and SEE ALSO; the version in the footer.
fn man_pages(
    cli: clap::Command,
    commands: &[Declared],
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    let mut cmd = cli.disable_help_subcommand(true);
    cmd.build();
    let version = format!("klog {}", env!("CARGO_PKG_VERSION"));
    let mut pages = vec![("klog".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push((sub.get_name().to_string(), sub.clone()));
    }
    for (name, page) in pages {
        let line = synopsis(&name, &page);
        let man = clap_mangen::Man::new(page)
            .source(version.clone())
            .manual("klog manual");
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        let mut text = String::from_utf8(roff)?.replace('`', "");
        if name != "klog" {
            text = with_synopsis(&text, &line);
        }
        text.push_str(&extra_sections(&name, commands));
        let path = dir.join(man.get_filename());
        let text = with_tbl(text);
        std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
    }
    for (name, about, body) in TOPICS {
        let path = dir.join(format!("klog-{name}.7"));
        std::fs::write(&path, topic_page(name, about, body, &version))
            .with_context(|| format!("write {}", path.display()))?;
    }
    let path = dir.join("klog-records.7");
    std::fs::write(&path, records_page(&version))
        .with_context(|| format!("write {}", path.display()))?;
    Ok(())
}

/// A page that holds a tbl(1) table says so on its first line, so that
/// man(1) runs tbl.
fn with_tbl(roff: String) -> String {
    if roff.contains("\n.TS\n") && !roff.starts_with("'\\\" t") {
        format!("'\\\" t\n{roff}")
    } else {
        roff
    }
}

/// A topic page of section 7 (klog-output(7), ...): NAME, then the page's
/// text, then SEE ALSO the other topic pages and klog(1).
fn topic_page(name: &str, about: &str, body: &str, version: &str) -> String {
    let mut roff = format!(
        ".TH klog-{} 7 \"\" \"{}\" \"klog manual\"\n.SH NAME\nklog\\-{} \\- {}\n",
        roff_text(name),
        roff_text(version),
        roff_text(name),
        roff_text(about)
    );
    roff.push_str(&roff::from_markdown(body));
    let related: Vec<String> = std::iter::once("klog(1)".to_string())
        .chain(
            TOPICS
                .iter()
                .map(|(n, _, _)| *n)
                .chain(["records"])
                .filter(|n| *n != name)
                .map(|n| format!("klog\\-{}(7)", roff_text(n))),
        )
        .collect();
    roff.push_str(".SH \"SEE ALSO\"\n");
    roff.push_str(&related.join(", "));
    roff.push('\n');
    with_tbl(roff)
}

/// klog-records(7): every record type and version klog decodes, with the
/// Kafka release that introduced each version, from the schema tables
/// ([`kaen_log::inspect::catalog`]); a tbl(1) table.
fn records_page(version: &str) -> String {
    use kaen_log::inspect::catalog::{entries, Part};
    let mut roff = String::from("'\\\" t\n");
    roff.push_str(&format!(
        ".TH klog-records 7 \"\" \"{}\" \"klog manual\"\n",
        roff_text(version)
    ));
    roff.push_str(".SH NAME\nklog\\-records \\- the record types and versions klog decodes\n");
    roff.push_str(".SH DESCRIPTION\n");
    for para in [
        "Every record type klog decodes, in the logs of a Kafka broker: the KRaft metadata log \
         (__cluster_metadata\u{2011}0, its snapshots and bootstrap.checkpoint) and its control records, \
         the group coordinator's records (__consumer_offsets), the share coordinator's \
         (__share_group_state) and the transaction coordinator's (__transaction_state).",
        "Each row is a range of versions of one record type, with the Kafka release whose schema \
         files first hold them (3.9 or earlier: already in 3.9; none: in no release). A coordinator \
         record's key has no version of its own: the rows give its value's versions.",
        "In the metadata log, a record type not listed is an error (Kafka's loader fails on it) and a \
         version above the newest listed is read with the newest layout, as Kafka's generated code \
         reads it (a warning), unless the record holds a nested struct (endpoints, features, quota \
         entities), whose generated read refuses the version (an error, as Kafka's loader fails); either way klog metadata, info, summary and cluster mark the parts of \
         the image it may touch as incomplete.",
    ] {
        roff.push_str(&format!(".PP\n{}\n", roff_text(&para.replace('\u{2011}', "-"))));
    }
    roff.push_str(".SH RECORDS\n.TS\nl l l l l.\nlog\ttype\trecord\tversions\tKafka release\n_\n");
    for e in entries()
        .iter()
        .filter(|e| matches!(e.part, Part::Record | Part::Value))
    {
        for (from, to, release) in e.release_ranges() {
            let versions = if from == to {
                from.to_string()
            } else {
                format!("{from}\u{2013}{to}")
            };
            roff.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\n",
                e.log.name(),
                e.id,
                roff_text(&e.name),
                versions.replace('\u{2013}', "\\(en"),
                roff_text(release.name())
            ));
        }
    }
    roff.push_str(".TE\n.SH \"SEE ALSO\"\nklog(1), klog\\-metadata(1), klog\\-dump\\-segment(1)\n");
    roff
}
