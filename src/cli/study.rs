//! `warpscope study`: the hardware-multithreading issue-slot study of seeds/004 — two seeded
//! instruction streams under none, coarse, barrel, fine and SMT — as a table or JSON, and
//! optionally as a trace, SVG grids and an animated HTML page.

use super::{emit, write_file_atomically};
use anyhow::{Context, Result};
use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::render::figure::{self, FigureFormat};
use warpscope::study::{self, Scheme, StallPreset, StudyConfig};
use warpscope::trace::TraceFormat;

pub const EXAMPLES: &str = "\
Examples:
  warpscope study
  warpscope study --width 4 --ilp 3 --stalls mixed --lat 6 --switch-cost 2 --groups 12 --seed 0
  warpscope study --stalls heavy --seed 7 --format json
  warpscope study --seed 0 --format csv > seeds.csv    # then the other seeds' rows under it:
  for s in $(seq 1 59); do warpscope study --seed $s --format csv | tail -n +2; done >> seeds.csv
  warpscope study --scheme coarse --scheme smt --figure grids.svg
  warpscope study --figure grids.pdf        # for a lecture's slides or a paper (or grids.png)
  warpscope study --trace study.wstrace --html study.html && warpscope analyze study.wstrace

Two threads, each a stream of groups of 1 to --ilp independent instructions with a stall after
every group but the last (none, a one-cycle dependency, or a miss of --lat cycles, drawn with
the --stalls preset's probabilities: light 70/20/10, mixed 50/25/25, heavy 30/30/40 %), run on
one core with --width issue slots under each scheme. The trace has one launch per scheme
(kernel study_<scheme>), run one after another, so `analyze`, `render` and `compare` read it.";

/// `--stalls` values, mirroring [`StallPreset`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StallsArg {
    /// Never stall.
    None,
    /// 70 % none, 20 % dependency, 10 % miss.
    Light,
    /// 50 % none, 25 % dependency, 25 % miss.
    Mixed,
    /// 30 % none, 30 % dependency, 40 % miss.
    Heavy,
}

impl From<StallsArg> for StallPreset {
    fn from(s: StallsArg) -> StallPreset {
        match s {
            StallsArg::None => StallPreset::None,
            StallsArg::Light => StallPreset::Light,
            StallsArg::Mixed => StallPreset::Mixed,
            StallsArg::Heavy => StallPreset::Heavy,
        }
    }
}

/// `--scheme` values, mirroring [`Scheme`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// No multithreading: thread 0 to the end, then thread 1.
    None,
    /// Switch on a miss when the other thread is ready, paying --switch-cost refill cycles; a
    /// thread that finishes hands over without a refill.
    Coarse,
    /// Strict rotation: even cycles thread 0, odd cycles thread 1.
    Barrel,
    /// Alternate, skipping a thread that is not ready.
    Fine,
    /// Both threads share each cycle's slots; who picks first alternates with the cycle (not
    /// with the last issuer, as under fine), so at --width 1 a single stream can run a few
    /// cycles slower than fine: fine ≥ smt holds on average, as seed 004 says.
    Smt,
}

impl From<SchemeArg> for Scheme {
    fn from(s: SchemeArg) -> Scheme {
        match s {
            SchemeArg::None => Scheme::None,
            SchemeArg::Coarse => Scheme::Coarse,
            SchemeArg::Barrel => Scheme::Barrel,
            SchemeArg::Fine => Scheme::Fine,
            SchemeArg::Smt => Scheme::Smt,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StudyFormat {
    Text,
    Json,
    /// A row per scheme with the settings on every row (concatenate several seeds' rows)
    Csv,
}

/// A setting's accepted range, checked by clap: a value outside it is a usage error (exit 2)
/// naming the flag, as for every other command.
fn ranged(lo: usize, hi: usize) -> impl TypedValueParser<Value = usize> {
    clap::value_parser!(u64)
        .range(lo as u64..=hi as u64)
        .map(|v| v as usize)
}

#[derive(Debug, Args)]
pub struct StudyArgs {
    /// Issue slots per cycle (1 to 8).
    #[arg(long, default_value_t = 4, value_parser = ranged(1, study::MAX_WIDTH))]
    pub width: usize,
    /// Largest group of independent instructions (1 to 16).
    #[arg(long, default_value_t = 3, value_parser = ranged(1, study::MAX_ILP))]
    pub ilp: usize,
    /// Stall probabilities after each group.
    #[arg(long, value_enum, default_value = "mixed")]
    pub stalls: StallsArg,
    /// Miss latency in cycles (0 to 1000).
    #[arg(long, default_value_t = 6, value_parser = ranged(0, study::MAX_LATENCY))]
    pub lat: usize,
    /// Refill cycles each coarse-grained switch on a miss costs (0 to 1000).
    #[arg(long, default_value_t = 2, value_parser = ranged(0, study::MAX_LATENCY))]
    pub switch_cost: usize,
    /// Groups per thread (1 to 1000).
    #[arg(long, default_value_t = 12, value_parser = ranged(1, study::MAX_GROUPS))]
    pub groups: usize,
    /// Seed of the two streams (the default gives five distinct finishing times).
    #[arg(long, default_value_t = study::DEFAULT_SEED)]
    pub seed: u64,
    /// Only these schemes (repeatable; all five by default, always in the order none, coarse,
    /// barrel, fine, smt).
    #[arg(long, value_enum, value_name = "SCHEME")]
    pub scheme: Vec<SchemeArg>,
    /// Table format on stdout (or in -o).
    #[arg(long, value_enum, default_value = "text")]
    pub format: StudyFormat,
    /// Write the table to this file instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Write a warpscope trace (one launch per scheme; `.jsonl` for JSON Lines).
    #[arg(long, value_name = "OUT.wstrace")]
    pub trace: Option<PathBuf>,
    /// Write the grids of every scheme on one time axis (runs of at most 2000 cycles): SVG,
    /// or by the extension a vector PDF or a PNG (2 pixels per SVG pixel) for slides.
    #[arg(
        long = "figure",
        visible_alias = "svg",
        value_name = "OUT.svg|.pdf|.png"
    )]
    pub figure: Option<PathBuf>,
    /// Write the animated, self-contained HTML page (runs of at most 2000 cycles).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
}

pub fn run(args: StudyArgs) -> Result<ExitCode> {
    let cfg = StudyConfig {
        width: args.width,
        ilp: args.ilp,
        stalls: args.stalls.into(),
        lat: args.lat,
        switch_cost: args.switch_cost,
        groups: args.groups,
        seed: args.seed,
    };
    cfg.validate()?;
    let outputs: Vec<(&str, &std::path::Path)> = [
        ("table", &args.output),
        ("trace", &args.trace),
        ("figure", &args.figure),
        ("HTML page", &args.html),
    ]
    .into_iter()
    .filter_map(|(what, p)| p.as_deref().map(|p| (what, p)))
    .collect();
    super::distinct_files(&outputs, &[])?;
    let figure_format = match &args.figure {
        Some(path) => Some(FigureFormat::from_extension(path).ok_or_else(|| {
            super::usage(format!(
                "{}: say the figure's format with its extension (.svg, .pdf, .png)",
                path.display()
            ))
        })?),
        None => None,
    };
    let streams = study::generate_streams(&cfg);
    let wanted: Vec<Scheme> = args.scheme.iter().map(|&s| s.into()).collect();
    let results: Vec<_> = Scheme::ALL
        .into_iter()
        .filter(|s| wanted.is_empty() || wanted.contains(s))
        .map(|s| study::simulate(s, &streams, &cfg))
        .collect();
    // Whatever can fail does so before the first file is written, so that a failed command
    // leaves none of its outputs half made.
    if args.figure.is_some() || args.html.is_some() {
        study::check_drawable(&results)?;
    }
    if let Some(path) = &args.trace {
        let format = TraceFormat::from_path(path);
        write_file_atomically(path, |out| {
            study::trace::write_trace(out, format, &cfg, &streams, &results)?;
            Ok(())
        })
        .with_context(|| format!("writing the trace {}", path.display()))?;
    }
    if let (Some(path), Some(format)) = (&args.figure, figure_format) {
        let bytes = figure::encode(&study::svg::render(&cfg, &results), format, 2)
            .with_context(|| format!("writing {}", path.display()))?;
        write_file_atomically(path, |out| {
            out.write_all(&bytes)
                .with_context(|| format!("writing {}", path.display()))
        })?;
    }
    if let Some(path) = &args.html {
        let text = study::html::render(&cfg, &results);
        write_file_atomically(path, |out| {
            out.write_all(text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))
        })?;
    }
    let table = match args.format {
        StudyFormat::Text => study::render_text(&results),
        StudyFormat::Json => study::render_json(&cfg, &results),
        StudyFormat::Csv => study::render_csv(&cfg, &results),
    };
    match &args.output {
        Some(path) => write_file_atomically(path, |out| {
            out.write_all(table.as_bytes())
                .with_context(|| format!("writing {}", path.display()))
        })?,
        None => emit(&table)?,
    }
    Ok(ExitCode::SUCCESS)
}
