//! The jobs of a parallel verification as processes of their own.
//!
//! Plain verification reads segments through memory maps
//! ([`crate::log::mapped`]). Jobs that are threads of one process share
//! its address space: each map, populate and release of one job takes that
//! address space's locks and flushes the TLBs of the cores the other jobs
//! run on. On 64 partitions of 8 MiB on two cores, two threads verified
//! 1.68× as fast as one, two processes on halves of the folders 1.88×. So
//! with [`Workers`] set, the first job runs on the calling thread and every
//! other job is a worker process (the program [`Workers`] names, which runs
//! [`serve`]); a thread here hands its worker runs of partitions ([`take`])
//! and reads its reports back. The partitions are taken in order from one
//! counter, as the threads of [`super::verify_partitions`] take them, and
//! the reports go to the same slots, so the output does not depend on which
//! job verified what.
//!
//! The protocol is one JSON document per line, over the worker's stdin and
//! stdout (its stderr is the parent's):
//!
//! - to the worker: [`ToWorker::Start`] first (what to check, and the cores
//!   the worker may use), then [`ToWorker::Verify`] with a partition folder
//!   for each partition of a run, and [`ToWorker::Granted`] when the worker
//!   holds the permit it asked for;
//! - from the worker: for each partition, [`FromWorker::Report`] or
//!   [`FromWorker::Failed`]; around a decompression of more than
//!   [`super::JOB_SCRATCH`] bytes, [`FromWorker::Hold`] (then it waits for
//!   `Granted`) and [`FromWorker::Release`]. The permit is the parent's one
//!   mutex, so across processes too one job at a time holds a large batch.
//!
//! A worker that cannot be started leaves the run to threads. A worker that
//! ends without a report fails the partition it had, naming it and how the
//! worker ended; the other jobs go on with the rest.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use super::{Checked, Jobs, Options, Report};
use crate::error::{Error, Result};
use crate::findings::{Finding, Kind, Severity};
use crate::format::DecodeLimits;
use crate::log::Partition;
use crate::txn::TxnOptions;

/// How to start a worker: a program that runs [`serve`] on its stdin and
/// stdout (klog's is `klog verify-worker`), or, with `fork`, a copy of
/// this process when it runs one thread (see [`Started::fork_all`]; the
/// program otherwise).
#[derive(Debug, Clone)]
pub struct Workers {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub fork: bool,
}

/// What the parent sends.
#[derive(Debug, Serialize, Deserialize)]
enum ToWorker {
    /// First, once: what to check.
    Start(Settings),
    /// Verify the partition in this folder; with `flush`, send the reports
    /// made so far once its report is made.
    Verify { dir: OsString, flush: bool },
    /// The permit asked for with [`FromWorker::Hold`] is the worker's.
    Granted,
}

/// What a worker sends.
#[derive(Debug, Serialize, Deserialize)]
enum FromWorker {
    /// The partition's report.
    Report(WireReport),
    /// The partition could not be verified: the error, as it reads.
    Failed(String),
    /// Asks for the permit to decompress a large batch.
    Hold,
    /// Gives the permit back.
    Release,
}

/// [`Options`] without what stays in the parent (jobs, progress, workers),
/// and the cores the worker may run on.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Settings {
    limits: DecodeLimits,
    no_indexes: bool,
    index_only: bool,
    deep: bool,
    records: bool,
    txn: TxnOptions,
    cores: usize,
}

impl Settings {
    fn of(opts: &Options, cores: usize) -> Self {
        Settings {
            limits: opts.limits,
            no_indexes: opts.no_indexes,
            index_only: opts.index_only,
            deep: opts.deep,
            records: opts.records,
            txn: opts.txn,
            cores,
        }
    }

    fn options(&self) -> Options {
        Options {
            limits: self.limits,
            no_indexes: self.no_indexes,
            index_only: self.index_only,
            deep: self.deep,
            records: self.records,
            txn: self.txn,
            ..Options::default()
        }
    }
}

/// A partition's [`Report`] on the wire: paths as the bytes they are (a
/// [`Finding`]'s JSON form has them as text, lossily).
#[derive(Debug, Serialize, Deserialize)]
struct WireReport {
    checked: Checked,
    findings: Vec<WireFinding>,
}

#[derive(Debug, Serialize, Deserialize)]
struct WireFinding {
    kind: Kind,
    severity: Severity,
    file: OsString,
    position: u64,
    byte: u64,
    offset: Option<i64>,
    producer_id: Option<i64>,
    detail: String,
}

impl From<&Report> for WireReport {
    fn from(r: &Report) -> Self {
        WireReport {
            checked: r.checked,
            findings: r
                .findings
                .iter()
                .map(|f| WireFinding {
                    kind: f.kind,
                    severity: f.severity,
                    file: f.file.clone().into_os_string(),
                    position: f.position,
                    byte: f.byte,
                    offset: f.offset,
                    producer_id: f.producer_id,
                    detail: f.detail.clone(),
                })
                .collect(),
        }
    }
}

impl From<WireReport> for Report {
    fn from(r: WireReport) -> Self {
        Report {
            checked: r.checked,
            findings: r
                .findings
                .into_iter()
                .map(|f| Finding {
                    kind: f.kind,
                    severity: f.severity,
                    file: f.file.into(),
                    position: f.position,
                    byte: f.byte,
                    offset: f.offset,
                    producer_id: f.producer_id,
                    detail: f.detail,
                })
                .collect(),
            skipped: Vec::new(),
        }
    }
}

/// `messages` as lines of the protocol, one JSON document each.
fn lines<T: Serialize>(messages: &[T]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for m in messages {
        serde_json::to_writer(&mut out, m)?;
        out.push(b'\n');
    }
    Ok(out)
}

/// The next line as a `T`; `None` at the end of input.
fn recv<T: for<'de> Deserialize<'de>>(from: &mut impl BufRead) -> std::io::Result<Option<T>> {
    let mut line = String::new();
    if from.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line).map(Some).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not a message of the verify-worker protocol: {e}"),
        )
    })
}

/// The next partitions for a worker of one of `jobs` jobs: a share of
/// those not taken yet (half of an even share, so that the last runs are
/// short and the jobs end together), at least one; empty when none is left.
///
/// This is guided self-scheduling: 64 partitions and two jobs take about a
/// dozen round trips, not 32.
pub(super) fn take(next: &AtomicUsize, len: usize, jobs: usize) -> std::ops::Range<usize> {
    let mut from = next.load(Ordering::Relaxed);
    loop {
        let left = len.saturating_sub(from);
        if left == 0 {
            return len..len;
        }
        let n = (left / (2 * jobs.max(1))).max(1);
        match next.compare_exchange_weak(from, from + n, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return from..from + n,
            Err(now) => from = now,
        }
    }
}

/// The folders of `run` as a worker is sent them, each with whether to
/// flush after its report: the last but one (see [`Worker::jobs`]).
fn run_messages<'a>(
    parts: &'a [&'a Partition],
    run: std::ops::Range<usize>,
) -> impl Iterator<Item = (OsString, bool)> + 'a {
    let end = run.end;
    run.map(move |i| (parts[i].dir.clone().into_os_string(), i + 2 == end))
}

/// A worker lost at partition `at`, with the others sent to it (`rest`),
/// which the parent verifies itself.
struct Lost {
    at: usize,
    error: std::io::Error,
    rest: std::ops::Range<usize>,
}

impl Lost {
    /// Lost before the first partition of `run`.
    fn at(run: std::ops::Range<usize>, error: std::io::Error) -> Self {
        Lost {
            at: run.start,
            error,
            rest: run.start + 1..run.end,
        }
    }
}

/// A worker process and the pipes to it.
///
/// What goes to the worker is written by a thread of its own, so that this
/// side never blocks writing: a run of partition folders can be more than a
/// pipe holds, and a worker blocked writing reports nobody reads would
/// wait for this side, blocked writing folders it does not read.
pub(super) struct Worker {
    child: Proc,
    /// Lines for the writer thread.
    to: std::sync::mpsc::Sender<Vec<u8>>,
    writer: std::thread::JoinHandle<()>,
    from: BufReader<File>,
    /// The run it was started on, if it was ([`Started::first`]).
    first: Option<std::ops::Range<usize>>,
}

/// A worker process just started: its process and this side's ends of
/// its pipes (its input, its output).
pub(super) struct Started {
    child: Proc,
    input: File,
    output: File,
    /// The run a copy of this process was started on: it has its
    /// partitions and its settings already, and no `Start` is sent.
    first: Option<std::ops::Range<usize>>,
}

impl Started {
    /// Run `w.program` as a worker.
    fn exec(w: &Workers) -> std::io::Result<Started> {
        let mut child = Command::new(&w.program)
            .args(&w.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("no pipes to the worker"));
        };
        Ok(Started {
            child: Proc::Spawned(child),
            input: File::from(OwnedFd::from(input)),
            output: File::from(OwnedFd::from(output)),
            first: None,
        })
    }

    /// Start `count` workers of `jobs` as copies of this process (`fork`
    /// without `exec`), each to run on `cores` cores and each on a first
    /// run of partitions taken for it here; none unless this process runs
    /// one thread, the calling one.
    ///
    /// A copy made while another thread runs could find a lock that
    /// thread held (the allocator's, a `Mutex`'s) held forever; with one
    /// thread, the caller's, nothing is held but what the caller holds,
    /// and the copy only verifies and writes to its pipe. It starts in
    /// about a tenth of the time `exec` of klog takes (loading the program
    /// again), and it starts verifying at once, on what it was given: it
    /// waits for no message. So all the copies are made here, before any
    /// thread starts; each closes the pipes of the copies made before it,
    /// so that a worker's input ends when the parent closes it.
    pub(super) fn fork_all(count: usize, jobs: &Jobs<'_>, cores: usize) -> Vec<Started> {
        let mut all: Vec<Started> = Vec::new();
        if !one_thread() {
            return all;
        }
        for _ in 0..count {
            let inherited: Vec<RawFd> = all
                .iter()
                .flat_map(|s| [s.input.as_raw_fd(), s.output.as_raw_fd()])
                .collect();
            let first = take(&jobs.next, jobs.parts.len(), jobs.count);
            match Started::fork(jobs, first.clone(), cores, &inherited) {
                Ok(started) => all.push(started),
                Err(_) => {
                    // Not started: the parent verifies that run.
                    for i in first {
                        jobs.verify_here(i);
                    }
                    break;
                }
            }
        }
        all
    }

    /// One copy of this process that verifies `first`, then serves the
    /// parent's runs on its pipes ([`serve`]) and exits; `inherited`:
    /// descriptors it closes first.
    fn fork(
        jobs: &Jobs<'_>,
        first: std::ops::Range<usize>,
        cores: usize,
        inherited: &[RawFd],
    ) -> std::io::Result<Started> {
        let (to_read, to_write) = pipe()?;
        let (from_read, from_write) = pipe()?;
        // SAFETY: this process runs one thread (checked by the caller), so
        // the copy holds no lock another thread held; it runs klog's own
        // code on its copy of memory and leaves by `_exit`, never
        // returning into the caller's frames or running their destructors.
        match unsafe { libc::fork() } {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                drop((to_write, from_read));
                for &fd in inherited {
                    // SAFETY: the parent's ends of other workers' pipes,
                    // owned by the caller's values, which this copy never
                    // uses or drops.
                    unsafe { libc::close(fd) };
                }
                crate::log::cores::restart(cores);
                let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let link = RefCell::new(Link {
                        input: BufReader::new(Box::new(File::from(to_read))),
                        output: Box::new(std::io::BufWriter::new(File::from(from_write))),
                        queued: run_messages(jobs.parts, first).collect(),
                    });
                    work(&link, &Settings::of(jobs.opts, cores).options())
                }));
                let code = match served {
                    Ok(Ok(())) => 0,
                    Ok(Err(e)) => {
                        eprintln!("klog: {}", crate::escape::escape_cell(&e.to_string()));
                        2
                    }
                    Err(_) => 101,
                };
                // SAFETY: ends this copy without running the parent's exit handlers.
                unsafe { libc::_exit(code) }
            }
            pid => Ok(Started {
                child: Proc::Forked { pid, ended: None },
                input: File::from(to_write),
                output: File::from(from_read),
                first: Some(first),
            }),
        }
    }
}

/// A pipe: its read end, its write end (close-on-exec both).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`, which this takes over.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are open and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Whether this process runs one thread; false when that cannot be read.
///
/// A thread whose work is done still counts until it has exited, and a
/// scope of threads (`std::thread::scope`) returns when their closures
/// have: right after one, as after an earlier verification, the count can
/// be higher for a moment. So a count above one is read again a few times,
/// for at most about a millisecond, before it stands.
fn one_thread() -> bool {
    for _ in 0..10 {
        match threads() {
            Some(1) => return true,
            Some(_) => std::thread::sleep(std::time::Duration::from_micros(100)),
            None => return false,
        }
    }
    false
}

/// The threads of this process (`/proc/self/stat`'s 20th field).
fn threads() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let end = stat.rfind(')')?;
    stat[end + 1..].split_whitespace().nth(17)?.parse().ok()
}

/// A worker's process: run from a program, or a copy of this one.
enum Proc {
    Spawned(Child),
    Forked {
        pid: libc::pid_t,
        /// How it ended, once reaped.
        ended: Option<ExitStatus>,
    },
}

impl Proc {
    /// How it ended, if it has; `block`: wait for it.
    fn reap(&mut self, block: bool) -> std::io::Result<Option<ExitStatus>> {
        match self {
            Proc::Spawned(child) if block => child.wait().map(Some),
            Proc::Spawned(child) => child.try_wait(),
            Proc::Forked { ended: Some(s), .. } => Ok(Some(*s)),
            Proc::Forked { pid, ended } => {
                let flags = if block { 0 } else { libc::WNOHANG };
                let mut status = 0;
                loop {
                    // SAFETY: waits for this process's own child.
                    match unsafe { libc::waitpid(*pid, &mut status, flags) } {
                        0 => return Ok(None),
                        -1 => {
                            let e = std::io::Error::last_os_error();
                            if e.kind() != std::io::ErrorKind::Interrupted {
                                return Err(e);
                            }
                        }
                        _ => {
                            *ended = Some(ExitStatus::from_raw(status));
                            return Ok(*ended);
                        }
                    }
                }
            }
        }
    }

    /// End it (SIGKILL) if it has not ended.
    fn kill(&mut self) {
        match self {
            Proc::Spawned(child) => {
                let _ = child.kill();
            }
            Proc::Forked { pid, ended: None } => {
                // SAFETY: signals this process's own child, not yet reaped.
                unsafe { libc::kill(*pid, libc::SIGKILL) };
            }
            Proc::Forked { .. } => {}
        }
    }
}

impl Worker {
    /// Start a worker that checks as `opts` says, on up to `cores` cores:
    /// `forked`, a copy of this process made for it, else `w.program`.
    pub(super) fn start(
        w: &Workers,
        forked: Option<Started>,
        opts: &Options,
        cores: usize,
    ) -> std::io::Result<Worker> {
        let Started {
            mut child,
            input,
            output,
            first,
        } = match forked {
            Some(started) => started,
            None => Started::exec(w)?,
        };
        let (to, lines) = std::sync::mpsc::channel::<Vec<u8>>();
        let writer = std::thread::Builder::new()
            .name("verify-worker-input".into())
            .spawn(move || {
                // Ends when the worker stops reading, or when `to` is
                // dropped; then the worker's input closes.
                let mut input = input;
                for line in lines {
                    if input.write_all(&line).is_err() {
                        break;
                    }
                }
            });
        let writer = match writer {
            Ok(writer) => writer,
            Err(e) => {
                child.kill();
                let _ = child.reap(true);
                return Err(e);
            }
        };
        let worker = Worker {
            child,
            to,
            writer,
            from: BufReader::new(output),
            first,
        };
        if worker.first.is_none() {
            worker.post(&[ToWorker::Start(Settings::of(opts, cores))])?;
        }
        Ok(worker)
    }

    /// Hand `messages` to the writer thread, as one write.
    fn post(&self, messages: &[ToWorker]) -> std::io::Result<()> {
        self.to
            .send(lines(messages)?)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "its input closed"))
    }

    /// One job of [`super::verify_partitions`] through this worker, one of
    /// `jobs`: take the next partitions not taken yet ([`take`]), have the
    /// worker verify them, put each report in its slot, until none is left
    /// or the worker is lost.
    ///
    /// Partitions go to a worker in runs, and its reports come back in runs:
    /// a round trip wakes this thread on a busy core, which costs about as
    /// much as checking a partition of a few MiB. The worker flushes its
    /// reports when it has verified all but the last partition of a run
    /// (the parent then sends the next run, so the worker never waits for
    /// one) and when it has nothing left to verify. If the worker is lost,
    /// the partition it was verifying fails and the others sent to it are
    /// verified on this thread.
    pub(super) fn jobs(mut self, run: &Jobs<'_>) {
        let Err(lost) = self.runs(run) else {
            self.end();
            return;
        };
        let ended = self.kill();
        let why = format!(
            "{}: the worker process verifying this partition ended without a report ({}; {ended})",
            run.parts[lost.at].dir.display(),
            lost.error
        );
        run.fill(lost.at, Err(Error::Invalid(why)));
        for i in lost.rest {
            run.verify_here(i);
        }
    }

    /// The runs of [`Worker::jobs`] until none is left, or the worker is lost.
    fn runs(&mut self, jobs: &Jobs<'_>) -> Result<(), Lost> {
        let mut run = match self.first.take() {
            Some(first) => first,
            None => {
                let run = take(&jobs.next, jobs.parts.len(), jobs.count);
                self.send_run(jobs.parts, run.clone())
                    .map_err(|error| Lost::at(run.clone(), error))?;
                run
            }
        };
        while let Some(i) = run.next() {
            if run.is_empty() {
                // Before the last report of this run: the next run.
                run = take(&jobs.next, jobs.parts.len(), jobs.count);
                self.send_run(jobs.parts, run.clone())
                    .map_err(|error| Lost {
                        at: i,
                        error,
                        rest: run.clone(),
                    })?;
            }
            let out = self.report(&jobs.large).map_err(|error| Lost {
                at: i,
                error,
                rest: run.clone(),
            })?;
            if let Ok(r) = &out {
                // The worker's walks advance its own counter: this
                // process's progress moves a partition at a time.
                crate::log::walk::add_walked_bytes(r.checked.bytes);
                if let Some(progress) = &jobs.opts.progress {
                    progress.fetch_add(r.checked.bytes, Ordering::Relaxed);
                }
            }
            jobs.fill(i, out);
        }
        Ok(())
    }

    /// Send the partitions of `run` in one write, the last but one marked
    /// to be flushed after.
    fn send_run(
        &mut self,
        parts: &[&Partition],
        run: std::ops::Range<usize>,
    ) -> std::io::Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let messages: Vec<ToWorker> = run_messages(parts, run)
            .map(|(dir, flush)| ToWorker::Verify { dir, flush })
            .collect();
        self.post(&messages)
    }

    /// The report of the partition the worker verifies now, holding `large`
    /// for it between its `Hold` and `Release`. The outer error: the worker
    /// is lost.
    fn report(&mut self, large: &Mutex<()>) -> std::io::Result<Result<Report>> {
        let mut permit: Option<MutexGuard<'_, ()>> = None;
        loop {
            let message = recv(&mut self.from)?.ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "its output ended")
            })?;
            match message {
                FromWorker::Hold => {
                    // A poisoned lock only means a job panicked: the permit still serves.
                    permit = Some(large.lock().unwrap_or_else(|e| e.into_inner()));
                    self.post(&[ToWorker::Granted])?;
                }
                FromWorker::Release => drop(permit.take()),
                FromWorker::Report(r) => return Ok(Ok(r.into())),
                FromWorker::Failed(message) => return Ok(Err(Error::Invalid(message))),
            }
        }
    }

    /// Close the worker's input (it ends at the end of its input) and wait.
    fn end(self) {
        let Worker {
            mut child,
            to,
            writer,
            from,
            ..
        } = self;
        drop(to);
        let _ = writer.join();
        drop(from);
        let _ = child.reap(true);
    }

    /// Stop a worker that broke off, and say how it ended.
    fn kill(&mut self) -> String {
        let status = match self.child.reap(false) {
            Ok(Some(status)) => Ok(Some(status)),
            _ => {
                self.child.kill();
                self.child.reap(true)
            }
        };
        match status {
            Ok(Some(s)) => format!("worker {s}"),
            Ok(None) => "the worker did not end".to_string(),
            Err(e) => format!("waiting for the worker: {e}"),
        }
    }
}

/// The worker's side of the pipes.
struct Link<'io> {
    input: BufReader<Box<dyn Read + 'io>>,
    output: Box<dyn Write + 'io>,
    /// Partitions the parent sent ahead while this worker waited for the
    /// permit, in the order sent.
    queued: VecDeque<(OsString, bool)>,
}

impl Link<'_> {
    /// The next partition to verify, and whether to flush after its
    /// report (`None` at the end of input).
    fn next_partition(&mut self) -> Result<Option<(PathBuf, bool)>> {
        if let Some((dir, flush)) = self.queued.pop_front() {
            return Ok(Some((dir.into(), flush)));
        }
        match self.recv()? {
            None => Ok(None),
            Some(ToWorker::Verify { dir, flush }) => Ok(Some((dir.into(), flush))),
            other => Err(unexpected(other)),
        }
    }

    /// The parent's next message. Reports are written as they are made and
    /// flushed only here, when this worker has read everything sent to it
    /// and would wait: the parent then reads them in one wake-up.
    fn recv(&mut self) -> Result<Option<ToWorker>> {
        if self.input.buffer().is_empty() {
            self.output.flush().map_err(parent_lost)?;
        }
        recv(&mut self.input).map_err(parent_lost)
    }

    /// Write `message`; it is flushed when the worker would wait ([`Link::recv`]).
    fn send(&mut self, message: &FromWorker) -> Result<()> {
        let line = lines(std::slice::from_ref(message)).map_err(parent_lost)?;
        self.output.write_all(&line).map_err(parent_lost)
    }

    /// [`Link::send`] and flush: the parent waits for it.
    fn send_now(&mut self, message: &FromWorker) -> Result<()> {
        self.send(message)?;
        self.output.flush().map_err(parent_lost)
    }
}

/// The worker's side of the permit of [`super::Permit::Parent`].
pub(super) trait Remote {
    /// Ask the parent for the permit and wait for it; false when the parent
    /// is gone (then there is no one to share memory with, and the caller
    /// goes on without it).
    fn hold(&self) -> bool;
    /// Give it back.
    fn release(&self);
}

impl Remote for RefCell<Link<'_>> {
    fn hold(&self) -> bool {
        let mut link = self.borrow_mut();
        if link.send_now(&FromWorker::Hold).is_err() {
            return false;
        }
        loop {
            match link.recv() {
                Ok(Some(ToWorker::Granted)) => return true,
                Ok(Some(ToWorker::Verify { dir, flush })) => link.queued.push_back((dir, flush)),
                _ => return false,
            }
        }
    }

    fn release(&self) {
        let _ = self.borrow_mut().send_now(&FromWorker::Release);
    }
}

/// Be a worker: verify each partition the parent names on `input` and
/// send its report on `output`, until the input ends.
pub fn serve(input: impl Read, output: impl Write) -> Result<()> {
    let link = RefCell::new(Link {
        input: BufReader::new(Box::new(input)),
        output: Box::new(output),
        queued: VecDeque::new(),
    });
    let settings = match link.borrow_mut().recv()? {
        Some(ToWorker::Start(s)) => s,
        // Nothing was asked.
        None => return Ok(()),
        other => return Err(unexpected(other)),
    };
    // Before anything has asked how many cores there are: the worker runs
    // on the ones the parent gave it.
    crate::log::cores::set_cores(settings.cores);
    work(&link, &settings.options())
}

/// The worker's loop: verify each partition queued or sent, send its
/// report, until the input ends.
fn work(link: &RefCell<Link<'_>>, opts: &Options) -> Result<()> {
    loop {
        let Some((dir, flush)) = link.borrow_mut().next_partition()? else {
            return Ok(());
        };
        let permit = Some(super::Permit::Parent(link));
        let done = Partition::open(&dir).and_then(|p| super::verify_one(&p, opts, permit));
        let message = match done {
            Ok(report) => FromWorker::Report(WireReport::from(&report)),
            Err(e) => FromWorker::Failed(e.to_string()),
        };
        match flush {
            true => link.borrow_mut().send_now(&message)?,
            false => link.borrow_mut().send(&message)?,
        }
    }
}

/// The pipes to the parent failed.
fn parent_lost(e: std::io::Error) -> Error {
    Error::Invalid(format!("verify-worker: {e}"))
}

fn unexpected(message: Option<ToWorker>) -> Error {
    Error::Invalid(format!(
        "verify-worker: unexpected message from the parent: {message:?}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::path::Path;

    /// Partition folders among the fixtures: damaged (a CRC mismatch, a
    /// torn tail), transactional, and clean.
    const PARTITIONS: &[&str] = &[
        "fixtures/corrupt/orders-0",
        "fixtures/truncated/orders-0",
        "fixtures/txn/__transaction_state-0",
        "fixtures/data/orders-0",
        "fixtures/data/payments.eu-west-1",
        "fixtures/broker/orders-0",
    ];

    fn partitions() -> Vec<Partition> {
        PARTITIONS
            .iter()
            .map(|p| Partition::open(Path::new(p)).unwrap())
            .collect()
    }

    fn in_process(p: &Partition, opts: &Options) -> Report {
        let mut r = Report::default();
        super::super::verify_partition(p, opts, &mut r).unwrap();
        r
    }

    fn line<T: Serialize>(m: &T) -> Vec<u8> {
        lines(std::slice::from_ref(m)).unwrap()
    }

    fn messages(out: &[u8]) -> Vec<FromWorker> {
        out.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    fn verify(dir: &Path, flush: bool) -> ToWorker {
        ToWorker::Verify {
            dir: dir.as_os_str().to_owned(),
            flush,
        }
    }

    #[test]
    fn runs_hand_out_every_partition_once_and_shrink_to_one() {
        let next = AtomicUsize::new(0);
        let mut sizes = Vec::new();
        loop {
            let run = take(&next, 64, 2);
            if run.is_empty() {
                break;
            }
            assert_eq!(run.start, sizes.iter().sum::<usize>());
            sizes.push(run.len());
        }
        // A quarter of what is left each time (two jobs), at least one.
        assert_eq!(sizes[..4], [16, 12, 9, 6]);
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 64);
        assert_eq!(take(&next, 64, 2), 64..64);

        // Taken from several threads at once: each index exactly once.
        let next = AtomicUsize::new(0);
        let seen = Mutex::new(vec![0u32; 10_000]);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| loop {
                    let run = take(&next, 10_000, 4);
                    if run.is_empty() {
                        break;
                    }
                    let mut seen = seen.lock().unwrap();
                    for i in run {
                        seen[i] += 1;
                    }
                });
            }
        });
        assert!(seen.into_inner().unwrap().iter().all(|&n| n == 1));
    }

    #[test]
    fn a_worker_reports_what_verifying_in_process_finds() {
        let opts = Options {
            records: true,
            deep: true,
            ..Options::default()
        };
        let parts = partitions();
        let mut input = line(&ToWorker::Start(Settings::of(&opts, 1)));
        for (i, p) in parts.iter().enumerate() {
            input.extend(line(&verify(&p.dir, i == 1)));
        }
        input.extend(line(&verify(Path::new("fixtures/no-such-folder-0"), false)));
        let mut output = Vec::new();
        serve(Cursor::new(input), &mut output).unwrap();

        let mut got = messages(&output).into_iter();
        for p in &parts {
            let Some(FromWorker::Report(r)) = got.next() else {
                panic!("no report for {}", p.dir.display())
            };
            let (r, want) = (Report::from(r), in_process(p, &opts));
            assert_eq!(r.checked, want.checked, "{}", p.dir.display());
            assert_eq!(r.findings, want.findings, "{}", p.dir.display());
        }
        let missing = Partition::open(Path::new("fixtures/no-such-folder-0")).unwrap_err();
        match got.next() {
            Some(FromWorker::Failed(m)) => assert_eq!(m, missing.to_string()),
            other => panic!("{other:?}"),
        }
        assert!(got.next().is_none());
        // The damaged fixtures were among them.
        assert!(!in_process(&parts[0], &opts).findings.is_empty());
    }

    #[test]
    fn paths_cross_the_pipe_as_their_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().join(std::ffi::OsStr::from_bytes(b"data-\xff\n"));
        let p = parent.join("orders-0");
        std::fs::create_dir_all(&p).unwrap();
        for f in std::fs::read_dir("fixtures/corrupt/orders-0").unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, p.join(f.file_name().unwrap())).unwrap();
        }
        let opts = Options::default();
        let mut input = line(&ToWorker::Start(Settings::of(&opts, 1)));
        input.extend(line(&verify(&p, false)));
        let mut output = Vec::new();
        serve(Cursor::new(input), &mut output).unwrap();
        let [FromWorker::Report(r)] = &mut messages(&output)[..] else {
            panic!("{}", String::from_utf8_lossy(&output))
        };
        let r = Report::from(std::mem::replace(
            r,
            WireReport {
                checked: Checked::default(),
                findings: Vec::new(),
            },
        ));
        let want = in_process(&Partition::open(&p).unwrap(), &opts);
        assert!(!want.findings.is_empty());
        assert_eq!(r.findings, want.findings);
        assert!(r.findings[0].file.starts_with(&parent));
    }

    #[test]
    fn a_worker_waiting_for_the_permit_keeps_the_partitions_sent_meanwhile() {
        let mut input = line(&verify(Path::new("a-0"), false));
        input.extend(line(&verify(Path::new("b-0"), true)));
        input.extend(line(&ToWorker::Granted));
        let mut output = Vec::new();
        {
            let link = RefCell::new(Link {
                input: BufReader::new(Box::new(Cursor::new(input))),
                output: Box::new(&mut output),
                queued: VecDeque::new(),
            });
            assert!(link.hold());
            link.release();
            let mut link = link.borrow_mut();
            assert_eq!(
                link.next_partition().unwrap(),
                Some((PathBuf::from("a-0"), false))
            );
            assert_eq!(
                link.next_partition().unwrap(),
                Some((PathBuf::from("b-0"), true))
            );
            assert_eq!(link.next_partition().unwrap(), None);
        }
        let sent = messages(&output);
        assert!(
            matches!(sent[..], [FromWorker::Hold, FromWorker::Release]),
            "{sent:?}"
        );

        // A parent gone before it grants: the worker goes on without it.
        let link = RefCell::new(Link {
            input: BufReader::new(Box::new(Cursor::new(Vec::new()))),
            output: Box::new(Vec::new()),
            queued: VecDeque::new(),
        });
        assert!(!link.hold());
    }

    #[test]
    fn a_lost_worker_fails_its_partition_and_the_rest_is_verified_here() {
        let parts = partitions();
        let refs: Vec<&Partition> = parts.iter().collect();
        let opts = Options::default();
        // Reads the start, then ends without a report.
        let w = Workers {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "read start; exit 3".into()],
            fork: false,
        };
        let worker = Worker::start(&w, None, &opts, 1).unwrap();
        let run = Jobs {
            parts: &refs,
            opts: &opts,
            count: 1,
            next: AtomicUsize::new(0),
            large: Mutex::new(()),
            results: Mutex::new((0..refs.len()).map(|_| None).collect()),
        };
        worker.jobs(&run);
        let next = run.next.load(Ordering::Relaxed);
        let results = run.results.into_inner().unwrap();
        let Some(Err(e)) = &results[0] else {
            panic!("{:?}", results[0])
        };
        let e = e.to_string();
        assert!(e.starts_with("fixtures/corrupt/orders-0: the worker process verifying this partition ended without a report ("), "{e}");
        // One job: its first run was half of the partitions, the next run
        // half of the rest; both were verified on this thread.
        let taken = next.min(refs.len());
        assert!(taken > 1, "{taken}");
        for (i, p) in refs.iter().enumerate().take(taken).skip(1) {
            let Some(Ok(r)) = &results[i] else {
                panic!("{i}: {:?}", results[i])
            };
            assert_eq!(r.findings, in_process(p, &opts).findings);
        }
        assert!(results[taken..].iter().all(Option::is_none));
    }

    #[test]
    fn a_forked_worker_is_reaped_once_and_can_be_killed() {
        // The children only call async-signal-safe functions: a copy of
        // this test process, which runs threads, may do nothing else.
        // SAFETY: the child calls `_exit` alone.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(3) }
        }
        assert!(pid > 0);
        let mut p = Proc::Forked { pid, ended: None };
        let ended = p.reap(true).unwrap().unwrap();
        assert_eq!(ended.code(), Some(3));
        // Reaped once; asked again, the same answer (the pid may be reused).
        assert_eq!(p.reap(false).unwrap(), Some(ended));
        p.kill();
        assert_eq!(p.reap(true).unwrap(), Some(ended));

        // SAFETY: the child calls `pause` alone until it is killed.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            loop {
                unsafe { libc::pause() };
            }
        }
        let mut p = Proc::Forked { pid, ended: None };
        assert_eq!(p.reap(false).unwrap(), None);
        p.kill();
        let ended = p.reap(true).unwrap().unwrap();
        assert_eq!(ended.signal(), Some(libc::SIGKILL));
        assert_eq!(ended.to_string(), "signal: 9 (SIGKILL)");
    }

    #[test]
    fn a_worker_that_cannot_start_leaves_the_jobs_to_threads() {
        let parts = partitions();
        let refs: Vec<&Partition> = parts.iter().collect();
        let opts = Options {
            jobs: 3,
            workers: Some(Workers {
                program: "/nonexistent/klog".into(),
                args: Vec::new(),
                fork: false,
            }),
            ..Options::default()
        };
        let reports = super::super::verify_partitions(&refs, &opts).unwrap();
        for (r, p) in reports.iter().zip(&refs) {
            assert_eq!(r.findings, in_process(p, &opts).findings);
            assert_eq!(r.checked, in_process(p, &opts).checked);
        }
    }
}
