//! `warpscope compare BASE OTHER...`: every metric of each trace beside the baseline(s), with
//! the header differences first; `--changed` and `--metric` keep only some of the metrics.

use super::analyze::{FormatArg, TaxonomyArg};
use super::emit;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::analyze::compare::{self, Compared, RowFilter};
use warpscope::trace_label;

pub const EXAMPLES: &str = "\
Examples:
  warpscope compare traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace
  warpscope compare gto.wstrace lrr.wstrace barrel.wstrace --format csv > policies.csv
  warpscope compare run1.wstrace run2.wstrace run3.wstrace candidate.wstrace --baselines 3
  warpscope compare gto.wstrace lrr.wstrace --changed
  warpscope compare gto.wstrace lrr.wstrace --metric scheduler,warp_state --changed

The first trace is the baseline; every other trace shows the difference to it in %. With
--baselines N the first N traces are baselines: the others show the difference to their mean
and a z-score (how many baseline standard deviations away they are). Traces of different
kernels or GPU configs may be compared: the header fields that differ are listed first.

The text names sections and metrics as `analyze` does (Scheduler Statistics, Issued Warp Per
Scheduler, long_scoreboard [warp-cycles]); JSON and CSV keep the snake_case keys
(scheduler, issued_warp_per_scheduler, warp_states.long_scoreboard), JSON with the label
beside them. --changed keeps the metrics whose value is not the same in every trace, and the
text says how many rows it hid. --metric PATTERN keeps the metrics whose section, key or label
contains PATTERN, ignoring case (`eligible`, `Warp State`, `long_scoreboard`); give it
several times or comma-separated to keep any that match one. Both apply to every format.";

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
    /// Only the metrics whose value is not the same in every trace.
    #[arg(long)]
    pub changed: bool,
    /// Only the metrics whose section, key or label contains PATTERN (ignoring case);
    /// repeatable or comma-separated.
    #[arg(long = "metric", value_delimiter = ',', value_name = "PATTERN")]
    pub metrics: Vec<String>,
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
    let filter = RowFilter {
        changed: args.changed,
        metrics: args.metrics.clone(),
    };
    let taxonomy = args.taxonomy.into();
    let traces = args
        .traces
        .iter()
        .zip(trace_label::labels(&args.traces))
        .map(|(p, label)| {
            Compared::load(p, label, taxonomy).with_context(|| p.display().to_string())
        })
        .collect::<Result<Vec<_>>>()?;
    let c = compare::compare(&traces, args.baselines)
        .filtered(&filter)
        .map_err(|e| super::usage(format!("--metric: {e}")))?;
    let text = match args.format {
        FormatArg::Text => compare::render_text(&c),
        FormatArg::Json => serde_json::to_string_pretty(&c)? + "\n",
        FormatArg::Csv => compare::to_csv(&c),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
