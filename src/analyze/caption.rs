//! What a chart's title and group headings, and a comparison's run column, say about the
//! runs shown: a trace's kernels, GPU and policy (`vecAdd<float> on volta (gto)`) and, where
//! several traces are shown side by side, every part of their headers that tells them apart —
//! kernels, GPU, policy, scoreboard, warp slots per SM, any other config field — so that a
//! comparison of scoreboards is not three groups all headed `(gto)` under a title that names
//! none. It reads only trace headers, so the analysis ([`super::compare`]) and the charts
//! (`crate::render`) both take their words from here.
//!
//! A study trace (`warpscope study --trace`) has a policy in its config only because every
//! config does; its launches are the study's schemes, and captions say that instead.

use super::compare::header_differences;
use crate::kernel_name;
use crate::trace::TraceHeader;

/// Room in a caption for a kernel name beside the GPU's and the policy's.
const SUBJECT_KERNEL_CHARS: usize = 48;
/// The other config fields a group heading names; past them it ends with an ellipsis.
const OTHER_FIELDS: usize = 3;
/// What a study trace is run under, where another trace names its policy.
pub const STUDY_POLICY: &str = "one scheme per launch";

/// The parts of a run that captions name by their meaning rather than by their field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Kernels,
    Gpu,
    Policy,
    Scoreboard,
    WarpSlots,
}

impl Part {
    const ALL: [Part; 5] = [
        Part::Kernels,
        Part::Gpu,
        Part::Policy,
        Part::Scoreboard,
        Part::WarpSlots,
    ];

    /// The header field this part is, as [`header_differences`] names it (the kernels are
    /// fields of the launches, never of the config).
    fn config_field(self) -> Option<&'static str> {
        match self {
            Part::Kernels => None,
            Part::Gpu => Some("config.name"),
            Part::Policy => Some("config.scheduler.policy"),
            Part::Scoreboard => Some("config.scheduler.scoreboard"),
            Part::WarpSlots => Some("config.sm.max_warps"),
        }
    }

    /// The part's value in `h`, as a list of several runs' values shows it.
    fn value(self, h: &TraceHeader) -> String {
        let c = &h.config;
        match self {
            Part::Kernels => {
                let mut kernels: Vec<String> = h
                    .launches
                    .iter()
                    .map(|l| kernel_name::function_within(&l.kernel, SUBJECT_KERNEL_CHARS))
                    .collect();
                kernels.dedup();
                kernels.join(", ")
            }
            Part::Gpu => c.name.clone(),
            Part::Policy if crate::study::trace::schemes_of(h).is_some() => STUDY_POLICY.into(),
            Part::Policy => c.scheduler.policy.name().to_string(),
            Part::Scoreboard => c.scheduler.scoreboard.name().to_string(),
            Part::WarpSlots => c.sm.max_warps.to_string(),
        }
    }

    /// One run's value said alone, as a group heading says it (`ranges scoreboard`).
    fn named(self, value: &str) -> String {
        match self {
            Part::Kernels | Part::Gpu | Part::Policy => value.to_string(),
            Part::Scoreboard => format!("{value} scoreboard"),
            Part::WarpSlots => format!("{value} warp slots per SM"),
        }
    }
}

/// The captions of traces drawn side by side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captions {
    /// What the traces ran, the parts in which they differ as lists of their values:
    /// `vecAdd<float> on volta (gto) with bitmap, ranges scoreboards`; for one trace its
    /// kernels, GPU and policy.
    pub subject: String,
    /// Per trace, what tells it from the others (`hopper, lrr`, `ranges scoreboard`), or its
    /// policy, which the subject of a lone trace names too, where nothing does.
    pub distinctions: Vec<String>,
}

/// The captions of the runs whose headers are `headers`.
pub fn captions(headers: &[&TraceHeader]) -> Captions {
    let values = |part: Part| -> Vec<String> { headers.iter().map(|h| part.value(h)).collect() };
    let differs = |part: Part| {
        let v = values(part);
        v.iter().any(|x| *x != v[0])
    };
    let listed = |part: Part| {
        let mut distinct: Vec<String> = Vec::new();
        for v in values(part) {
            if !distinct.contains(&v) {
                distinct.push(v);
            }
        }
        // A trace of several kernels already lists them with commas.
        distinct.join(if part == Part::Kernels { " vs " } else { ", " })
    };
    // Config fields that differ beyond the parts named: only between runs on GPUs of one
    // name, as another GPU's fields differ by being another GPU. A lone trace (every time
    // chart's subject) differs from nothing: its header is not walked.
    let differences = match headers.len() {
        0 | 1 => Vec::new(),
        _ => header_differences(headers),
    };
    let others: Vec<_> = if differs(Part::Gpu) {
        Vec::new()
    } else {
        differences
            .iter()
            .filter(|d| d.field.starts_with("config."))
            .filter(|d| !Part::ALL.iter().any(|p| p.config_field() == Some(&d.field)))
            .collect()
    };
    let mut subject = format!(
        "{} on {} ({})",
        listed(Part::Kernels),
        listed(Part::Gpu),
        listed(Part::Policy)
    );
    let mut with = Vec::new();
    if differs(Part::Scoreboard) {
        with.push(format!("{} scoreboards", listed(Part::Scoreboard)));
    }
    if differs(Part::WarpSlots) {
        with.push(format!("{} warp slots per SM", listed(Part::WarpSlots)));
    }
    if !others.is_empty() {
        let fields: Vec<&str> = others.iter().map(|d| config_path(&d.field)).collect();
        with.push(format!("different {}", fields.join(", ")));
    }
    if !with.is_empty() {
        subject.push_str(" with ");
        subject.push_str(&with.join(" and "));
    }
    let differing: Vec<Part> = Part::ALL.into_iter().filter(|&p| differs(p)).collect();
    let distinctions = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut parts: Vec<String> = differing.iter().map(|p| p.named(&p.value(h))).collect();
            for d in others.iter().take(OTHER_FIELDS) {
                let value = &d.values[i];
                let value = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(value);
                parts.push(format!("{} {value}", config_path(&d.field)));
            }
            if others.len() > OTHER_FIELDS {
                parts.push("…".into());
            }
            if parts.is_empty() {
                parts.push(Part::Policy.value(h));
            }
            parts.join(", ")
        })
        .collect();
    Captions {
        subject,
        distinctions,
    }
}

/// A config field's path inside the config (`memory.dram_latency`).
fn config_path(field: &str) -> &str {
    field.strip_prefix("config.").unwrap_or(field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::config::{Policy, ScoreboardKind};
    use crate::trace::TraceReader;

    fn header(sample: &str) -> TraceHeader {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("traces")
            .join(format!("{sample}.wstrace"));
        TraceReader::open(&path).unwrap().header().clone()
    }

    #[test]
    fn a_lone_trace_is_its_kernels_gpu_and_policy() {
        let h = header("reduce.small.gto");
        let c = captions(&[&h]);
        assert_eq!(c.subject, "reduce on small (gto)");
        assert_eq!(c.distinctions, ["gto"]);
        // Two runs of one setup: nothing tells them apart but the file.
        let c = captions(&[&h, &h]);
        assert_eq!(c.subject, "reduce on small (gto)");
        assert_eq!(c.distinctions, ["gto", "gto"]);
    }

    #[test]
    fn every_part_that_differs_is_listed_and_named_per_trace() {
        let base = header("reduce.small.gto");
        let mut other = base.clone();
        other.config.scheduler.policy = Policy::Lrr;
        other.config.scheduler.scoreboard = ScoreboardKind::Ranges;
        other.config.sm.max_warps = 16;
        let c = captions(&[&base, &other]);
        assert_eq!(
            c.subject,
            format!(
                "reduce on small (gto, lrr) with bitmap, ranges scoreboards and {}, 16 warp slots per SM",
                base.config.sm.max_warps
            )
        );
        assert_eq!(
            c.distinctions[1],
            "lrr, ranges scoreboard, 16 warp slots per SM"
        );
    }

    #[test]
    fn other_config_fields_that_differ_are_named_by_their_path() {
        let base = header("reduce.small.gto");
        let mut other = base.clone();
        other.config.memory.dram_latency += 100;
        let c = captions(&[&base, &other]);
        assert_eq!(
            c.subject,
            "reduce on small (gto) with different memory.dram_latency"
        );
        assert_eq!(
            c.distinctions,
            [
                format!("memory.dram_latency {}", base.config.memory.dram_latency),
                format!("memory.dram_latency {}", other.config.memory.dram_latency),
            ]
        );
        // Another GPU's fields differ by being another GPU: its name says it, and the parts
        // named by meaning (a sweep's axes) that differ too.
        let hopper = header("divergent.hopper.gto");
        let (small_slots, hopper_slots) = (base.config.sm.max_warps, hopper.config.sm.max_warps);
        assert_ne!(small_slots, hopper_slots);
        let c = captions(&[&base, &hopper]);
        assert_eq!(
            c.subject,
            format!("reduce vs divergent on small, hopper (gto) with {small_slots}, {hopper_slots} warp slots per SM")
        );
        assert_eq!(
            c.distinctions,
            [
                format!("reduce, small, {small_slots} warp slots per SM"),
                format!("divergent, hopper, {hopper_slots} warp slots per SM")
            ]
        );
    }
}
