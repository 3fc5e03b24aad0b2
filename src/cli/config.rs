//! `warpscope config`: list the GPU presets and print one as JSON; and the `--gpu` flag with its
//! per-run overrides, shared by the subcommands that run or compile for a GPU.

use super::emit;
use anyhow::{bail, Result};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use warpscope::launchfile::load_gpu_config;
use warpscope::sim::config::{ConfigError, GpuConfig, MemoryModel, Policy, ScoreboardKind};

pub const EXAMPLES: &str = "\
Examples:
  warpscope config list                      # the presets, one line each
  warpscope config show volta                # a preset as JSON
  warpscope config show volta > my_gpu.json  # edit it, then: warpscope run K.json --gpu my_gpu.json";

pub const SHOW_EXAMPLES: &str = "\
Examples:
  warpscope config show tiny
  warpscope config show hopper > hopper.json";

pub const LIST_EXAMPLES: &str = "\
Example:
  warpscope config list";

/// One-line descriptions of [`GpuConfig::PRESETS`], in the same order.
pub const PRESET_DESCRIPTIONS: [(&str, &str); 5] = [
    (
        "tiny",
        "tiny-gpu of seed 000: 2 cores, one 4-thread block each (warp size 4), \
         non-pipelined 6-cycle core, ideal memory",
    ),
    (
        "small",
        "teaching GPU: 2 SMs, 1 scheduler, 8 warp slots, warp size 32, small L1/L2, GTO (default)",
    ),
    (
        "pascal",
        "TITAN X Pascal-like: 4 SMs of 4 schedulers, 64 warps, 96 KiB shared, loads skip the L1, L2 202 / DRAM 302 cycles",
    ),
    (
        "volta",
        "V100-like: 4 SMs of 4 schedulers, 64 warps, 96 KiB shared, L1 28 / L2 193 / DRAM 400 cycles",
    ),
    (
        "hopper",
        "H100-like: 4 SMs of 4 schedulers, 64 warps, 228 KiB shared, L1 33 / L2 260 / DRAM 480 cycles",
    ),
];

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print a preset (or a JSON config file, validated) as pretty JSON.
    #[command(after_help = SHOW_EXAMPLES)]
    Show {
        /// Preset name (tiny, small, pascal, volta, hopper) or FILE.json.
        name: String,
    },
    /// List the GPU presets with a one-line description each.
    #[command(after_help = LIST_EXAMPLES)]
    List,
}

pub fn run(args: ConfigArgs) -> Result<ExitCode> {
    let text = match args.command {
        ConfigCommand::Show { name } => load_gpu(&name)?.to_json() + "\n",
        ConfigCommand::List => {
            let mut out = String::new();
            for (name, description) in PRESET_DESCRIPTIONS {
                let _ = writeln!(out, "{name:<8} {description}");
            }
            out.push_str(
                "\nMemory latencies are a load's, from issue until its result can be used, with \
                 the caches' ports and the DRAM queue idle.\n`warpscope config show NAME` prints \
                 every field; `--gpu FILE.json` runs an edited copy.\n",
            );
            out
        }
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Loads `--gpu NAME|FILE.json` (a file relative to the current directory).
pub fn load_gpu(spec: &str) -> Result<GpuConfig> {
    // Its messages name the preset or the file (the same command reads `--gpu` and
    // `config show`'s argument).
    load_gpu_config(spec, Path::new("")).map_err(anyhow::Error::msg)
}

pub(super) fn policy_parser() -> impl TypedValueParser<Value = Policy> {
    let values = Policy::ALL.map(|p| {
        let aliases = Policy::STUDY_ALIASES
            .iter()
            .filter(|(_, aliased)| *aliased == p)
            .map(|(alias, _)| *alias);
        let help = match aliases.clone().next() {
            Some(alias) => format!("{} (seed 004's `{alias}`)", p.summary()),
            None => p.summary().to_string(),
        };
        PossibleValue::new(p.name()).help(help).aliases(aliases)
    });
    PossibleValuesParser::new(values)
        .try_map(|s| Policy::from_name(&s).ok_or(format!("unknown policy `{s}`")))
}

pub(super) fn scoreboard_parser() -> impl TypedValueParser<Value = ScoreboardKind> {
    let values = ScoreboardKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.summary()));
    PossibleValuesParser::new(values)
        .try_map(|s| ScoreboardKind::from_name(&s).ok_or(format!("unknown scoreboard `{s}`")))
}

/// Parses `ideal`, `fixed:LATENCY` or `hierarchy`.
pub fn parse_memory_model(text: &str) -> Result<MemoryModel, String> {
    match text.trim() {
        "ideal" => Ok(MemoryModel::Ideal),
        "hierarchy" => Ok(MemoryModel::Hierarchy),
        t => match t.strip_prefix("fixed:") {
            Some(lat) => match lat.trim().parse::<u32>() {
                Ok(latency) if latency > 0 => Ok(MemoryModel::Fixed { latency }),
                _ => Err(format!(
                    "fixed:LATENCY needs a positive number of cycles, got `{lat}`"
                )),
            },
            None => Err(format!(
                "`{t}` is not a memory model; expected ideal, fixed:LATENCY (e.g. fixed:200) or hierarchy"
            )),
        },
    }
}

/// The name `--memory` takes for a memory model.
pub fn memory_model_name(m: MemoryModel) -> String {
    match m {
        MemoryModel::Ideal => "ideal".into(),
        MemoryModel::Fixed { latency } => format!("fixed:{latency}"),
        MemoryModel::Hierarchy => "hierarchy".into(),
    }
}

/// `--gpu`'s help where the input is a launch or kernel file (`run`, `record`).
pub const GPU_HELP_LAUNCH: &str = "GPU preset (tiny, small, pascal, volta, hopper) or a JSON config file (see `warpscope config show`). Default: the launch file's \"gpu\", else small.";
/// `--gpu`'s help where the input is an Accel-Sim trace (`replay`).
pub const GPU_HELP_TRACE: &str = "GPU preset (tiny, small, pascal, volta, hopper) or a JSON config file (see `warpscope config show`). Default: pascal for a trace before sm_70, hopper from sm_90, else volta.";

/// `--gpu` and the per-run overrides of the timing simulator.
#[derive(Debug, Args, Default)]
pub struct GpuArgs {
    /// GPU preset (tiny, small, pascal, volta, hopper) or a JSON config file (see `warpscope config
    /// show`). Default: for a launch or kernel file, the launch file's "gpu", else small; for
    /// an Accel-Sim trace, pascal before sm_70, hopper from sm_90, else volta.
    #[arg(long, value_name = "NAME|FILE.json")]
    pub gpu: Option<String>,
    /// Warp-scheduling policy of every scheduler (overrides the GPU's); `fine` and `none`
    /// are seed 004's names for `lrr` and `sequential`.
    #[arg(long, value_parser = policy_parser())]
    pub policy: Option<Policy>,
    /// Dependency tracking: bitmap, ranges or barriers (control codes; kernels without any get
    /// them from the auto-control pass).
    #[arg(long, value_parser = scoreboard_parser())]
    pub scoreboard: Option<ScoreboardKind>,
    /// Global memory model: ideal, fixed:LATENCY or hierarchy (L1, L2, DRAM).
    #[arg(long, value_name = "ideal|fixed:LAT|hierarchy", value_parser = parse_memory_model)]
    pub memory: Option<MemoryModel>,
    /// Number of SMs.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=GpuConfig::MAX_SMS as i64))]
    pub sms: Option<u32>,
    /// Warp slots per SM (sm.max_warps).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=GpuConfig::MAX_WARPS as i64))]
    pub warps: Option<u32>,
    /// Issue slots per scheduler per cycle (sm.issue_width).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=GpuConfig::MAX_ISSUE_WIDTH as i64))]
    pub issue_width: Option<u32>,
}

impl GpuArgs {
    /// The flags given, by name, for "only with the timing simulator" messages.
    pub fn overrides_given(&self) -> Option<&'static str> {
        [
            ("--policy", self.policy.is_some()),
            ("--scoreboard", self.scoreboard.is_some()),
            ("--memory", self.memory.is_some()),
            ("--sms", self.sms.is_some()),
            ("--warps", self.warps.is_some()),
            ("--issue-width", self.issue_width.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| flag)
    }

    /// [`validated`], where a field that only went wrong with a flag's value (each flag's
    /// own range is clap's to check) is the command line's fault: `--warps 2` on a GPU with
    /// four schedulers is a usage error naming the flag.
    pub fn validated(&self, config: GpuConfig) -> Result<GpuConfig> {
        let Err(ConfigError::Invalid { field, message }) = config.validate() else {
            return validated(config);
        };
        let culprit = match field {
            "sm.schedulers" => self.warps.map(|n| ("--warps", n)),
            _ => None,
        };
        match culprit {
            Some((flag, value)) => Err(super::usage(format!(
                "invalid value '{value}' for '{flag}': {field}: {message}"
            ))),
            None => validated(config),
        }
    }

    /// Applies the overrides to `config`. The caller validates the result.
    pub fn apply(&self, config: &mut GpuConfig) {
        if let Some(p) = self.policy {
            config.scheduler.policy = p;
        }
        if let Some(s) = self.scoreboard {
            config.scheduler.scoreboard = s;
        }
        if let Some(m) = self.memory {
            config.memory.model = m;
        }
        if let Some(n) = self.sms {
            config.num_sms = n;
        }
        if let Some(n) = self.warps {
            config.sm.max_warps = n;
        }
        if let Some(n) = self.issue_width {
            config.sm.issue_width = n;
        }
    }
}

/// Checks a config after overrides; the error names the field.
pub fn validated(config: GpuConfig) -> Result<GpuConfig> {
    match config.validate() {
        Ok(()) => Ok(config),
        Err(e) => bail!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptions' latencies are written by hand: each must be what the preset's loads
    /// take, a miss everywhere adding the DRAM's share to the L2's hit latency.
    #[test]
    fn preset_descriptions_state_the_presets_load_latencies() {
        for (name, description) in PRESET_DESCRIPTIONS {
            let c = GpuConfig::preset(name).unwrap();
            let m = &c.memory;
            if !description.contains("DRAM") {
                continue;
            }
            let l2 = m.l2.hit_latency;
            let dram = l2 + m.dram_latency;
            assert!(
                description.contains(&format!("L2 {l2} / DRAM {dram} cycles")),
                "{name}: {description}"
            );
            if m.l1.size_bytes > 0 {
                let l1 = m.l1.hit_latency;
                assert!(
                    description.contains(&format!("L1 {l1} /")),
                    "{name}: {description}"
                );
            }
        }
    }
}
