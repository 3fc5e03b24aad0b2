//! `warpscope compare BASE OTHER...`: every metric of each trace beside the baseline(s), with
//! the header differences first.

use super::analyze::{FormatArg, TaxonomyArg};
use super::emit;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::analyze::compare::{self, Compared};
use warpscope::trace_label;

pub const EXAMPLES: &str = "\
Examples:
  warpscope compare traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace
  warpscope compare gto.wstrace lrr.wstrace barrel.wstrace --format csv > policies.csv
  warpscope compare run1.wstrace run2.wstrace run3.wstrace candidate.wstrace --baselines 3

The first trace is the baseline; every other trace shows the difference to it in %. With
--baselines N the first N traces are baselines: the others show the difference to their mean
and a z-score (how many baseline standard deviations away they are). Traces of different
kernels or GPU configs may be compared: the header fields that differ are listed first.";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Traces, baseline(s) first.
    #[arg(required = true, num_args = 2.., value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// How many of the first traces are baselines.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub baselines: usize,
    #[arg(long, value_enum, default_value = "nsight")]
    pub taxonomy: TaxonomyArg,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

pub fn run(args: CompareArgs) -> Result<ExitCode> {
    for t in &args.traces {
        super::expect_warpscope_trace(t)?;
    }
    if args.baselines == 0 || args.baselines >= args.traces.len() {
        return Err(super::usage(format!(
            "--baselines {} must be at least 1 and leave at least one trace to compare ({} given)",
            args.baselines,
            args.traces.len()
        )));
    }
    let taxonomy = args.taxonomy.into();
    let traces = args
        .traces
        .iter()
        .zip(trace_label::labels(&args.traces))
        .map(|(p, label)| {
            Compared::load(p, label, taxonomy).with_context(|| p.display().to_string())
        })
        .collect::<Result<Vec<_>>>()?;
    let c = compare::compare(&traces, args.baselines);
    let text = match args.format {
        FormatArg::Text => compare::render_text(&c),
        FormatArg::Json => serde_json::to_string_pretty(&c)? + "\n",
        FormatArg::Csv => compare::to_csv(&c),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
