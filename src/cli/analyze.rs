//! `warpscope analyze TRACE`: the Nsight-style report of a recorded trace — launch statistics,
//! occupancy, scheduler statistics, warp-state statistics with every warp-cycle attributed,
//! issue slots, memory, dispatch, the source hotspots and rule hints; as text, JSON or CSV.

use super::emit;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::analyze::{self, Taxonomy};

pub const EXAMPLES: &str = "\
Examples:
  warpscope record kernels/reduce.json --gpu volta -o reduce.wstrace
  warpscope analyze reduce.wstrace
  warpscope analyze reduce.wstrace --taxonomy detailed --format json
  warpscope analyze reduce.wstrace --format csv --kernel reduce > reduce.csv

The analyzer reads only the trace. `nsight` names the states as Nsight Compute does
(long_scoreboard, barrier, ...); `detailed` keeps the raw reason (which register, which
dependency barrier, which pipe). Each launch ends with its source hotspots: the instructions
warps waited at, and those whose results they waited for; a replay of an Accel-Sim trace
recorded with lineinfo adds the same by CUDA source line.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TaxonomyArg {
    /// Nsight Compute's warp-state names.
    Nsight,
    /// The raw reasons: register, dependency barrier, pipe.
    Detailed,
}

impl From<TaxonomyArg> for Taxonomy {
    fn from(t: TaxonomyArg) -> Taxonomy {
        match t {
            TaxonomyArg::Nsight => Taxonomy::Nsight,
            TaxonomyArg::Detailed => Taxonomy::Detailed,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    /// One row per launch and metric, like `ncu --csv`.
    Csv,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A trace written by `warpscope record` (binary or JSON Lines).
    pub trace: PathBuf,
    #[arg(long, value_enum, default_value = "nsight")]
    pub taxonomy: TaxonomyArg,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    #[command(flatten)]
    pub selection: KernelArgs,
}

/// `--kernel`: the launches of one kernel, for `analyze` and `export`.
#[derive(Debug, Args, Default)]
pub struct KernelArgs {
    /// Only the launches of this kernel (all launches by default): its exact name, else any
    /// kernel whose name contains NAME. A replayed kernel's exact names are its mangled name,
    /// its signature and its function name (vecAdd<float>); vecAdd and _Z6vecAdd find
    /// _Z6vecAddIfEvPT_S1_S1_i by containing.
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
}

pub fn run(args: AnalyzeArgs) -> Result<ExitCode> {
    let taxonomy = args.taxonomy.into();
    let trace = super::progress::open_trace(&args.trace)?;
    let what = format!("analyzing {}", args.trace.display());
    let mut analysis = trace
        .reading(&what, |reader| analyze::analyze(reader, taxonomy))
        .with_context(|| args.trace.display().to_string())?;
    if let Some(name) = &args.selection.kernel {
        analysis
            .retain_kernel(name)
            .map_err(anyhow::Error::msg)
            .with_context(|| args.trace.display().to_string())?;
    }
    let text = match args.format {
        FormatArg::Text => analyze::render_text(&analysis),
        FormatArg::Json => analyze::to_json(&analysis) + "\n",
        FormatArg::Csv => analyze::to_csv(&analysis),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
