//! `warpscope analyze TRACE`: the Nsight-style report of a recorded trace — launch statistics,
//! scheduler statistics, warp-state statistics with every warp-cycle attributed, issue slots and
//! the source hotspots.

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

The analyzer reads only the trace. `nsight` names the states as Nsight Compute does
(long_scoreboard, barrier, ...); `detailed` keeps the raw reason (which register, which
dependency barrier, which pipe).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TaxonomyArg {
    /// Nsight Compute's warp-state names.
    Nsight,
    /// The raw reasons: register, dependency barrier, pipe.
    Detailed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A trace written by `warpscope record` (binary or JSON Lines).
    pub trace: PathBuf,
    #[arg(long, value_enum, default_value = "nsight")]
    pub taxonomy: TaxonomyArg,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

pub fn run(args: AnalyzeArgs) -> Result<ExitCode> {
    let taxonomy = match args.taxonomy {
        TaxonomyArg::Nsight => Taxonomy::Nsight,
        TaxonomyArg::Detailed => Taxonomy::Detailed,
    };
    let analysis = analyze::analyze_file(&args.trace, taxonomy)
        .with_context(|| args.trace.display().to_string())?;
    let text = match args.format {
        FormatArg::Text => analyze::render_text(&analysis),
        FormatArg::Json => analyze::to_json(&analysis) + "\n",
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
