//! One module per subcommand, each with its clap `Args`, its `run` and
//! its [`CommandEntry`], declared once in `commands!`; no command calls
//! another. What several share: [`args`] (option groups) and
//! [`replayed`] (the offsets topic replayed, its warnings said).

pub mod args;
pub mod generate;
pub mod output_guard;
pub mod replayed;

/// Declares the subcommands, each once, by its module, its variant of the
/// clap enum and its name: the module, the enum [`Command`], the dispatch
/// to its `run`, and the list the man pages and schemas are
/// generated from. `completions` and the hidden `generate` work on the
/// command line itself and are dispatched apart.
macro_rules! commands {
    ($($module:ident::$args:ident => $variant:ident = $name:literal,)*) => {
        $(pub mod $module;)*

        /// The subcommands.
        #[derive(Debug, clap::Subcommand)]
        pub enum Command {
            $($variant($module::$args),)*
            Completions(generate::CompletionsArgs),
            #[command(hide = true)]
            Generate(generate::GenerateArgs),
        }

        /// What each subcommand declares, in the command line's order.
        pub fn declared() -> Vec<Declared> {
            vec![$(Declared::of::<$module::$args>($name),)*]
        }

        /// Run `command`'s subcommand; `cli` makes klog's whole command
        /// line (for `completions` and `generate`).
        pub fn dispatch(
            command: &Command,
            out: &mut Output,
            cli: fn() -> clap::Command,
        ) -> anyhow::Result<Outcome> {
            match command {
                $(Command::$variant(args) => $module::run(args, out),)*
                Command::Completions(args) => generate::run_completions(args, cli(), out),
                Command::Generate(args) => generate::run(args, (cli(), &declared()), out),
            }
        }
    };
}

commands! {
    dump_segment::DumpSegmentArgs => DumpSegment = "dump-segment",
    verify_crc::VerifyCrcArgs => VerifyCrc = "verify-crc",
    diff::DiffArgs => Diff = "diff",
    replay_offsets::ReplayOffsetsArgs => ReplayOffsets = "replay-offsets",
    lag::LagArgs => Lag = "lag",
    groups::GroupsArgs => Groups = "groups",
    info::InfoArgs => Info = "info",
    metadata::MetadataArgs => Metadata = "metadata",
    summary::SummaryArgs => Summary = "summary",
    cluster::ClusterArgs => Cluster = "cluster",
    report::ReportArgs => Report = "report",
    tombstone::TombstoneArgs => Tombstone = "tombstone",
    reset_offsets::ResetOffsetsArgs => ResetOffsets = "reset-offsets",
    commit::CommitArgs => Commit = "commit",
    transactions::TransactionsArgs => Transactions = "transactions",
    stats::StatsArgs => Stats = "stats",
    export::ExportArgs => Export = "export",
    produce::ProduceArgs => Produce = "produce",
    group_demo::GroupDemoArgs => GroupDemo = "group-demo",
    eos_demo::EosDemoArgs => EosDemo = "eos-demo",
}

use crate::exit::Outcome;
use crate::report::Output;

/// What a subcommand declares beside its clap arguments and its `run`, on
/// its `Args` in its own file: its man page's sections beyond `--help`,
/// and the JSON Schema of its `--format json` documents. `commands!` below
/// lists each command once; the dispatch, the man pages and the schemas
/// come from that list.
pub trait CommandEntry {
    /// The page's EXAMPLES: (command line, what it does).
    const EXAMPLES: &'static [(&'static str, &'static str)];
    /// The page's SEE ALSO: subcommands, and topic pages as `name(7)`.
    const SEE_ALSO: &'static [&'static str];
    /// The page's DETAILS, in the Markdown subset of the page generator.
    const DETAILS: Option<&'static str> = None;

    /// The `--format json` documents: (file stem, schema); none for a
    /// command without JSON output.
    fn schemas() -> Vec<(&'static str, schemars::Schema)>;
}

/// One subcommand's declaration, as the page and schema generators read it.
#[derive(Clone, Copy)]
pub struct Declared {
    /// The subcommand's name (`dump-segment`).
    pub name: &'static str,
    pub examples: &'static [(&'static str, &'static str)],
    pub see_also: &'static [&'static str],
    pub details: Option<&'static str>,
    pub schemas: fn() -> Vec<(&'static str, schemars::Schema)>,
}

impl Declared {
    /// The declaration of the command `name` whose arguments are `A`.
    pub fn of<A: CommandEntry>(name: &'static str) -> Declared {
        Declared {
            name,
            examples: A::EXAMPLES,
            see_also: A::SEE_ALSO,
            details: A::DETAILS,
            schemas: A::schemas,
        }
    }
}

/// `n` (from `flag`) clamped to the cores this process may run on
/// (`available_parallelism`, which follows the CPU affinity mask): more
/// workers than cores only take turns on them, and thousands of them cost
/// more in starting and switching than they gain. Said once on stderr when
/// it clamps; the output is the same whatever the number.
pub fn clamp_to_cores(flag: &str, n: usize) -> usize {
    let cores = kaen_log::log::read::available_cores();
    if n > cores {
        crate::report::say!("note: {flag} {n} clamped to the {cores} cores available");
        cores
    } else {
        n
    }
}

/// Milliseconds since the Unix epoch, now (for commands without `--now-ms`).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Say on stderr, once per data directory, when a path given to a reading
/// command lies in a data directory whose `.lock` another process holds (a
/// running broker, or a klog writing): what klog reads may change while it
/// reads. The data directory of a path is the first of the path, its parent
/// (a partition folder) and its grandparent (a segment file) that has a
/// `.lock`.
pub fn warn_if_in_use(paths: &[&std::path::Path]) {
    use kaen_log::log::lock::{holder, Holder, LOCK_FILE};
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        let Some(dir) = path
            .ancestors()
            .take(3)
            .filter(|d| !d.as_os_str().is_empty())
            .find(|d| d.join(LOCK_FILE).is_file())
        else {
            continue;
        };
        if !seen.insert(dir.to_path_buf()) {
            continue;
        }
        let who = match holder(dir) {
            Some(Holder::Process(pid)) => format!("process {pid} (a running broker?)"),
            Some(Holder::Unknown) => "another process (a klog writing?)".to_string(),
            None => continue,
        };
        crate::report::say!(
            "warning: {} is in use: {who} holds its {LOCK_FILE}; what klog reads may change while it reads \
             (stop the broker, or read a copy)",
            dir.display()
        );
    }
}

/// Drop the paths that name a file or directory given before (the same
/// device and inode: `d` and `d/.`, or a symlink to `d`), saying so once
/// each on stderr: a reader given one directory twice would read, count
/// and report everything in it twice.
pub fn dedupe_paths(paths: &mut Vec<std::path::PathBuf>) {
    use kaen_log::log::files::identity;
    let mut seen: Vec<(kaen_log::log::files::Identity, std::path::PathBuf)> = Vec::new();
    paths.retain(|p| {
        let id = identity(p);
        if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
            crate::report::say!(
                "note: {} is {} again (the same directory or file); read once",
                p.display(),
                first.display()
            );
            return false;
        }
        seen.push((id, p.clone()));
        true
    });
}

/// A log directory's last shutdown and what its next start re-reads
/// (`kaen_log::inspect::restart`), with its one-line headline: what
/// `info`, `verify-crc`, `summary` and `report` put first.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct RestartOut {
    #[serde(flatten)]
    pub restart: kaen_log::inspect::restart::Restart,
    /// The text line (escaped).
    pub headline: String,
}

/// [`restart_of`] each path given, in order (the log directories among them).
pub fn restarts_of(paths: &[std::path::PathBuf]) -> Vec<RestartOut> {
    paths.iter().filter_map(|p| restart_of(p)).collect()
}

/// [`RestartOut`] of `dir` when it is a broker's log directory (or holds
/// a clean-shutdown marker); `None` for klog's own directories, partition
/// folders and files.
pub fn restart_of(dir: &std::path::Path) -> Option<RestartOut> {
    use kaen_log::log::shutdown::ShutdownState;
    if !matches!(
        kaen_log::log::classify(dir),
        Ok(kaen_log::log::PathKind::DataDir)
    ) {
        return None;
    }
    let restart = kaen_log::inspect::restart::Restart::plan(dir).ok()?;
    if restart.shutdown.state == ShutdownState::NotABroker {
        return None;
    }
    let headline = format!(
        "{}: {}",
        kaen_log::format::escape::escape_cell(&dir.display().to_string()),
        restart.headline()
    );
    Some(RestartOut { restart, headline })
}
