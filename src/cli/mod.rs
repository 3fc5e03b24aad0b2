//! Command-line definitions (clap derive) and the glue every subcommand shares: output that
//! tolerates a closed pipe, and error reporting. No simulator logic lives here; each subcommand
//! file turns its arguments into library calls and prints the result.

/// `eprintln!` for a closed stderr (`warpscope ... 2>&1 | head -1`): a message nobody reads is
/// no reason to stop, where `eprintln!` would panic.
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` for a closed stderr, as [`stderr_line!`].
macro_rules! stderr_text {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

pub mod analyze;
pub mod asm;
pub mod bench;
pub mod compare;
pub mod config;
pub mod export;
pub mod profile;
mod progress;
pub mod record;
pub mod render;
pub mod replay;
pub mod report;
pub mod run;
pub mod study;
pub mod sweep;
pub mod trace;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::{self, Write};
use std::process::ExitCode;
use warpscope::asm::Dialect;
use warpscope::launchfile::{KernelFileError, LaunchFileError};

const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncycle-level GPU simulator (timing model and functional runner) with an Nsight-style profiler",
    "\nGPU presets: tiny, small, pascal, volta, hopper (see `warpscope config list`)",
    "\nkernel dialects: native (.sasm), tinygpu (.tgpu), tinygpu-hex (.hex); Accel-Sim traces (replay)",
    "\nlaunch files: JSON (see README.md); traces: docs/trace-format.md; analysis keys: docs/analysis.md"
);

const TOP_EXAMPLES: &str = "\
Examples:
  warpscope profile                                  # the bundled example, report in profile-reduce/
  warpscope profile kernels/matmul.json --gpu volta --policy lrr
  warpscope run kernels/reduce.json --gpu volta --policy lrr --json
  warpscope record kernels/reduce.json --verbosity 2 -o reduce.wstrace
  warpscope analyze reduce.wstrace --format csv
  warpscope render reduce.wstrace --chart timeline -o timeline.svg
  warpscope report reduce.wstrace -o report-reduce
  warpscope compare gto.wstrace lrr.wstrace
  warpscope sweep kernels/reduce.json --policy lrr,gto,barrel -o sweep-reduce
  warpscope export reduce.wstrace --perfetto reduce.json
  warpscope replay tests/data/accelsim/vectoradd-100-32 --gpu volta -o vecadd.wstrace
  warpscope asm kernels/vecadd_tiny.tgpu
  warpscope asm --opcodes --gpu volta                # the instruction set: operands, pipes, latencies
  warpscope config list";

/// warpscope: a cycle-level GPU simulator with an Nsight-style profiler on top.
///
/// Run kernels (native SASS-like assembly, tiny-gpu assembly/hex, or Accel-Sim SASS traces
/// from real GPUs) on a cycle-level GPU model, record every event, and get what Nsight Compute
/// would show — with every warp-cycle attributed: text, JSON, CSV, SVG charts, an HTML report,
/// Perfetto, comparisons and sweeps. Start with `warpscope profile`.
#[derive(Debug, Parser)]
#[command(
    name = "warpscope",
    bin_name = "warpscope",
    version,
    long_version = LONG_VERSION,
    propagate_version = true,
    after_help = TOP_EXAMPLES,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// A shared flag's help in one command's words (`--gpu`'s for a command that takes only one
/// kind of input: the shared text names the defaults of both).
fn with_help(arg: clap::Arg, text: &'static str) -> clap::Arg {
    arg.help(text).long_help(text)
}

/// One variant per subcommand; each has its own file in `cli/`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record, analyze and report in one step; without arguments, the bundled example.
    #[command(after_help = profile::EXAMPLES,
              mut_arg("width", |a| with_help(a, report::WIDTH_HELP)))]
    Profile(Box<profile::ProfileArgs>),
    /// Run a launch file, or a kernel with --grid/--block/--param, on the timing simulator.
    #[command(after_help = run::EXAMPLES, mut_arg("gpu", |a| with_help(a, config::GPU_HELP_LAUNCH)))]
    Run(Box<run::RunArgs>),
    /// Run like `run` on the timing simulator and write every event to a trace file.
    #[command(after_help = record::EXAMPLES, mut_arg("gpu", |a| with_help(a, config::GPU_HELP_LAUNCH)))]
    Record(Box<record::RecordArgs>),
    /// Analyze a trace: Nsight-style sections (occupancy, scheduler, warp states, memory, source...).
    #[command(after_help = analyze::EXAMPLES)]
    Analyze(analyze::AnalyzeArgs),
    /// Draw one chart of a trace as SVG, PDF or PNG: timeline, dispatch, stalls, occupancy, slots, source.
    #[command(after_help = render::EXAMPLES,
              mut_arg("from", |a| with_help(a, render::FROM_HELP)),
              mut_arg("to", |a| with_help(a, render::TO_HELP)),
              mut_arg("sm", |a| with_help(a, render::SM_HELP)),
              mut_arg("kernel", |a| with_help(a, render::KERNEL_HELP)))]
    Render(render::RenderArgs),
    /// Write the HTML report (with charts), report.txt and report.json for one or more traces.
    #[command(after_help = report::EXAMPLES,
              mut_arg("width", |a| with_help(a, report::WIDTH_HELP)))]
    Report(report::ReportArgs),
    /// Compare traces: every metric beside the baseline(s), with differences and z-scores.
    #[command(after_help = compare::EXAMPLES)]
    Compare(compare::CompareArgs),
    /// Record one launch under several policies/scoreboards/warp counts and compare them.
    #[command(after_help = sweep::EXAMPLES)]
    Sweep(Box<sweep::SweepArgs>),
    /// Export a trace for other tools: Chrome Trace Event JSON for ui.perfetto.dev.
    #[command(after_help = export::EXAMPLES)]
    Export(export::ExportArgs),
    /// Replay an Accel-Sim SASS trace on the timing simulator into a warpscope trace.
    #[command(after_help = replay::EXAMPLES, mut_arg("gpu", |a| with_help(a, config::GPU_HELP_TRACE)))]
    Replay(Box<replay::ReplayArgs>),
    /// The multithreading issue-slot study of seed 004: five schemes on two seeded streams.
    #[command(after_help = study::EXAMPLES)]
    Study(Box<study::StudyArgs>),
    /// Read a trace back: dump it as JSON Lines, convert it, or summarize it.
    #[command(after_help = trace::EXAMPLES)]
    Trace(trace::TraceArgs),
    /// Assemble a kernel and print its disassembly or its JSON form.
    #[command(after_help = asm::EXAMPLES)]
    Asm(asm::AsmArgs),
    /// List the GPU presets or print one as JSON.
    #[command(after_help = config::EXAMPLES)]
    Config(config::ConfigArgs),
    /// Measure the simulator's speed (simulated warp instructions per host second).
    #[command(after_help = bench::EXAMPLES)]
    Bench(bench::BenchArgs),
}

/// `--dialect` values, mirroring [`Dialect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    /// Native SASS-like assembly (.sasm).
    Native,
    /// tiny-gpu assembly text (.tgpu).
    Tinygpu,
    /// tiny-gpu program as 16-bit hex words (.hex).
    TinygpuHex,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Native => Dialect::Native,
            DialectArg::Tinygpu => Dialect::Tinygpu,
            DialectArg::TinygpuHex => Dialect::TinygpuHex,
        }
    }
}

/// Runs the parsed command line and reports any error on stderr.
pub fn main(cli: Cli) -> ExitCode {
    // Ctrl-C (or a TERM) ends the command at once; outputs are written to `NAME.tmp` and
    // renamed when complete, so removing the temporary ones leaves every earlier file intact.
    let _ = ctrlc::set_handler(|| {
        warpscope::pending::remove_all();
        stderr_line!("interrupted");
        std::process::exit(130);
    });
    let result = match cli.command {
        Command::Asm(args) => asm::run(args),
        Command::Run(args) => run::run(*args),
        Command::Config(args) => config::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Record(args) => record::run(*args),
        Command::Trace(args) => trace::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Sweep(args) => sweep::run(*args),
        Command::Replay(args) => replay::run(*args),
        Command::Export(args) => export::run(args),
        Command::Render(args) => render::run(args),
        Command::Report(args) => report::run(args),
        Command::Profile(args) => profile::run(*args),
        Command::Study(args) => study::run(*args),
    };
    match result {
        Ok(code) => code,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            stderr_line!("error: {e}\n\nFor more information, try '--help'.");
            ExitCode::from(2)
        }
        Err(e) => {
            report(&e);
            ExitCode::FAILURE
        }
    }
}

/// A command line that asks for something impossible — flags that do not go together, one
/// missing that another needs — found after clap's parse: exit status 2, as for the errors
/// clap finds itself, so that scripts can tell a wrong command from a failed run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

/// A [`UsageError`] saying `message`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// Prints an error. A kernel's own assembler diagnostics are already in `FILE:LINE:COL: error:`
/// form and are printed as they are; everything else (including a launch file whose kernel does
/// not assemble) gets an `error:` prefix and its causes, unless the message already has them.
fn report(e: &anyhow::Error) {
    let kernel_error =
        e.downcast_ref::<KernelFileError>()
            .or_else(|| match e.downcast_ref::<LaunchFileError>() {
                Some(LaunchFileError::KernelFile(k)) => Some(k),
                _ => None,
            });
    if let Some(k @ KernelFileError::Assemble { .. }) = kernel_error {
        stderr_line!("{k}");
        return;
    }
    let mut message = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !message.contains(&c) {
            message.push_str(": ");
            message.push_str(&c);
        }
    }
    stderr_line!("error: {message}");
}

/// Writes the file at `path` through `PATH.tmp` and a rename, so that a reader never sees half
/// a file and a failed or interrupted write leaves any earlier file under `path` intact.
pub fn write_file_atomically<T>(
    path: &std::path::Path,
    write: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    use anyhow::Context;
    let path = &warpscope::pending::output_file(path)?;
    let tmp = warpscope::pending::tmp_path(path);
    let _pending = warpscope::pending::register(&tmp);
    let result = (|| {
        let file =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut out = io::BufWriter::new(file);
        let value = write(&mut out)?;
        out.flush()
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
        Ok(value)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Whether `path` is an Accel-Sim trace: a kernel list, a kernel's `.traceg`, or a directory
/// holding `kernelslist.g`.
pub fn is_accelsim_trace(path: &std::path::Path) -> bool {
    warpscope::replay::is_trace_path(path)
        && (!path.is_dir() || path.join("kernelslist.g").is_file())
}

/// An error, before anything is read, for an input that cannot be a warpscope trace but is
/// often given as one: an Accel-Sim trace (to replay first) or a directory (a profile's or a
/// sweep's output holds its traces).
pub fn expect_warpscope_trace(path: &std::path::Path) -> anyhow::Result<()> {
    let shown = path.display();
    if path.is_dir() && !is_accelsim_trace(path) {
        let mut held: Vec<String> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "wstrace"))
            .map(|p| p.display().to_string())
            .collect();
        held.sort();
        anyhow::bail!(
            "{shown} is a directory, not a trace{}",
            match held.first() {
                Some(first) => format!(
                    " (it holds {}, e.g. {first})",
                    warpscope::words::count(held.len() as u64, ".wstrace file", ".wstrace files")
                ),
                None => String::new(),
            }
        );
    }
    if is_accelsim_trace(path) {
        anyhow::bail!(
            "{shown} is an Accel-Sim trace, not a warpscope trace: replay it first \
             (`warpscope replay {shown} -o OUT.wstrace`), or replay, analyze and report it in \
             one step (`warpscope profile {shown}`)"
        );
    }
    Ok(())
}

/// An error, before any work, if an output file cannot be written where it is named: the path
/// is a directory (or ends in `/`), or the directory it would go in does not exist. Otherwise a
/// long run would end in a failed rename with a puzzling message.
pub fn writable_file(what: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let shown = path.display();
    if path.as_os_str() == "-" {
        // (Commands print their text to standard output; files are named.)
        return Err(usage(format!(
            "`-`: give a file name for the {what} (outputs are files, not standard output)"
        )));
    }
    // A link's target is what gets written, so that is what must be writable.
    let resolved = warpscope::pending::output_file(path)?;
    let path = resolved.as_path();
    let names_directory = path.as_os_str().to_string_lossy().ends_with(['/', '\\']);
    if path.is_dir() || names_directory {
        anyhow::bail!("{shown} is a directory: give a file name for the {what}");
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "{shown}: the directory {} does not exist (create it first)",
            parent.display()
        );
    }
    Ok(())
}

/// An error if an output cannot be written (see [`writable_file`]) or would replace an input or
/// another output of the same command: `outputs` and `inputs` as (what, path). Compared as the
/// files they name once both exist (an output not yet there replaces nothing), and by path
/// among outputs.
pub fn distinct_files(
    outputs: &[(&str, &std::path::Path)],
    inputs: &[(&str, &std::path::Path)],
) -> anyhow::Result<()> {
    let same = |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize())
    {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    for (what, out) in outputs {
        writable_file(what, out)?;
    }
    for (i, (what, out)) in outputs.iter().enumerate() {
        if let Some((other, _)) = inputs.iter().find(|(_, p)| same(out, p)) {
            anyhow::bail!(
                "{}: the {what} would replace the {other} it is made from; write it elsewhere",
                out.display()
            );
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| same(out, p)) {
            anyhow::bail!(
                "{}: given for both the {other} and the {what}; give each its own file",
                out.display()
            );
        }
    }
    Ok(())
}

/// Creates the output directory `dir` (and its parents); a file in its place is an error
/// that says so.
pub fn create_output_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "{} exists and is not a directory; the output needs a directory (give -o a new name)",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

/// An output directory this command made: when dropped, it removes the directories it
/// created (`dir`, and the parents that did not exist before) that are still empty, so that a
/// command that fails before writing anything leaves nothing behind. A directory that existed
/// before is never touched, nor one that holds anything (`remove_dir` refuses it), so holding
/// the guard through a successful run costs one refused call.
#[must_use = "the directories are removed when the guard is dropped"]
pub struct OutputDir {
    /// The directories created, deepest first.
    created: Vec<std::path::PathBuf>,
    /// Listed for the Ctrl-C handler, which exits without running this guard's `drop`.
    _interrupt: warpscope::pending::PendingDirs,
}

impl OutputDir {
    /// Creates `dir` as [`create_output_dir`] does, remembering which directories were new.
    pub fn create(dir: &std::path::Path) -> anyhow::Result<OutputDir> {
        // (`ancestors` ends in "" for a relative path: the working directory, which exists.)
        let created: Vec<_> = dir
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
            .map(std::path::Path::to_path_buf)
            .collect();
        create_output_dir(dir)?;
        let _interrupt = warpscope::pending::register_dirs(&created);
        Ok(OutputDir {
            created,
            _interrupt,
        })
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        warpscope::pending::remove_empty(&self.created);
    }
}

/// A launch the GPU refused, as `run`, `record`, `replay` and `profile` report it: the input
/// and the error, and, when it is a limit of this GPU (a block larger than it allows, or one
/// that never fits on an SM), the GPU's name and that another one may take it.
pub fn launch_failure(
    input: &std::path::Path,
    e: &warpscope::sim::LaunchError,
    config: &warpscope::sim::config::GpuConfig,
) -> anyhow::Error {
    anyhow::anyhow!("{}: {e}{}", input.display(), launch_hint(e, config))
}

/// What to try when a launch does not fit the GPU: another preset, or, when the limit it hit
/// is one `--warps` lowered, a larger `--warps` (another --gpu would not help then).
pub fn launch_hint(
    e: &warpscope::sim::LaunchError,
    config: &warpscope::sim::config::GpuConfig,
) -> String {
    use warpscope::sim::config::GpuConfig;
    use warpscope::sim::{LaunchError, SmLimit};
    match e {
        LaunchError::DoesNotFit {
            limit: SmLimit::Warps,
            ..
        } => {
            match GpuConfig::preset(&config.name) {
                Ok(preset) if preset.sm.max_warps > config.sm.max_warps => format!(
                    " (--warps {} on gpu {}, whose SMs have {} warp slots; give a larger --warps or leave it out)",
                    config.sm.max_warps, config.name, preset.sm.max_warps
                ),
                _ => format!(" (on gpu {}; try another --gpu)", config.name),
            }
        }
        LaunchError::BlockTooLarge { .. } | LaunchError::DoesNotFit { .. } => {
            format!(" (on gpu {}; try another --gpu)", config.name)
        }
        _ => String::new(),
    }
}

/// The launch error inside a recording's error (a launch file's, or a replay's), when the run
/// never started because of one. Matched by type: the wrappers are transparent, so their
/// `source` chain skips the launch error itself.
pub fn launch_error<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a warpscope::sim::LaunchError> {
    use warpscope::replay::ReplayError;
    use warpscope::trace::TraceError;
    if let Some(l) = e.downcast_ref() {
        return Some(l);
    }
    match e.downcast_ref::<TraceError>() {
        Some(TraceError::Launch(l)) => return Some(l),
        Some(_) => return None,
        None => {}
    }
    match e.downcast_ref::<ReplayError>()? {
        ReplayError::Launch(l) | ReplayError::Trace(TraceError::Launch(l)) => Some(l),
        _ => None,
    }
}

/// The hint after a fault message: for the watchdog, how to give a slow kernel more cycles
/// (`command` is the subcommand, `max_cycles` the limit asked for, if any); else nothing.
pub fn fault_hint(command: &str, fault: &warpscope::sim::Fault, max_cycles: Option<u64>) -> String {
    if !matches!(fault.kind, warpscope::sim::FaultKind::Watchdog { .. }) {
        return String::new();
    }
    match max_cycles {
        Some(n) => format!(
            "\nhint: the run stopped at --max-cycles {n}; give a slow kernel more, or see above why a stuck one waits"
        ),
        None => format!(
            "\nhint: `warpscope {command}` takes --max-cycles N (default {})",
            warpscope::sim::gpu::SimOptions::default().max_cycles
        ),
    }
}

/// Writes `text` to stdout; a closed pipe (`warpscope ... | head`) is not an error.
pub fn emit(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::launch_hint;
    use warpscope::sim::config::GpuConfig;
    use warpscope::sim::{LaunchError, SmLimit};

    /// The advice follows the limit the error names, not the words of its message: only
    /// warp slots are what `--warps` lowered.
    #[test]
    fn launch_hint_tells_to_raise_warps_only_for_the_warp_slot_limit() {
        let mut config = GpuConfig::preset("small").unwrap();
        config.sm.max_warps = 4;
        let error = |limit, what: &str| LaunchError::DoesNotFit {
            kernel: "k".into(),
            limit,
            what: what.into(),
        };
        let raise = " (--warps 4 on gpu small, whose SMs have 8 warp slots; give a larger \
                     --warps or leave it out)";
        let other_gpu = " (on gpu small; try another --gpu)";
        assert_eq!(
            launch_hint(&error(SmLimit::Warps, "too many warps"), &config),
            raise
        );
        for limit in [SmLimit::Registers, SmLimit::SharedMemory] {
            let e = error(limit, "a block needs more than an SM has (sm.max_warps)");
            assert_eq!(launch_hint(&e, &config), other_gpu, "{limit:?}");
        }
        // At the preset's own number of slots, a larger --warps is no way out.
        config.sm.max_warps = 8;
        let e = error(SmLimit::Warps, "too many warps");
        assert_eq!(launch_hint(&e, &config), other_gpu);
    }
}
