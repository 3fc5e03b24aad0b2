//! What a chart's title and group headings, and a comparison's run column, say about the
//! runs shown: a trace's kernels, GPU and policy (`vecAdd<float> on volta (gto)`) and, where
//! several traces are shown side by side, every part of their headers that tells them apart —
//! kernels, GPU, policy, scoreboard, warp slots per SM, issue width, memory model, any other
//! config field that differs between runs on one GPU — so that a comparison of scoreboards is
//! not three groups all headed `(gto)` under a title that names none. Lists of numbers (warp
//! slots, issue widths) are sorted; other lists keep the traces' order. It reads only trace headers, so the analysis ([`super::compare`]) and the charts
//! (`crate::render`) both take their words from here.
//!
//! A study trace (`warpscope study --trace`) has a policy in its config only because every
//! config does; its launches are the study's schemes, and captions say that instead.

use super::compare::{header_differences, HeaderDifference};
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
    IssueWidth,
    Memory,
}

impl Part {
    const ALL: [Part; 7] = [
        Part::Kernels,
        Part::Gpu,
        Part::Policy,
        Part::Scoreboard,
        Part::WarpSlots,
        Part::IssueWidth,
        Part::Memory,
    ];

    /// Whether `field`, as [`header_differences`] names it, is (part of) this part (the
    /// kernels are fields of the launches, never of the config; the memory model is its kind
    /// and, for `fixed`, its latency).
    fn covers(self, field: &str) -> bool {
        match self {
            Part::Kernels => false,
            Part::Gpu => field == "config.name",
            Part::Policy => field == "config.scheduler.policy",
            Part::Scoreboard => field == "config.scheduler.scoreboard",
            Part::WarpSlots => field == "config.sm.max_warps",
            Part::IssueWidth => field == "config.sm.issue_width",
            Part::Memory => {
                field == "config.memory.model" || field.starts_with("config.memory.model.")
            }
        }
    }

    /// Whether the part's values are numbers, listed in increasing order.
    fn numeric(self) -> bool {
        matches!(self, Part::WarpSlots | Part::IssueWidth)
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
            Part::IssueWidth => c.sm.issue_width.to_string(),
            Part::Memory => crate::sweep::memory_name(c.memory.model),
        }
    }

    /// One run's value said alone, as a group heading says it (`ranges scoreboard`).
    fn named(self, value: &str) -> String {
        match self {
            Part::Kernels | Part::Gpu | Part::Policy => value.to_string(),
            Part::Scoreboard => format!("{value} scoreboard"),
            Part::WarpSlots => format!("{value} warp slots per SM"),
            Part::IssueWidth => format!("issue width {value}"),
            Part::Memory => format!("{value} memory"),
        }
    }

    /// Several runs' values listed, as a title says them (`bitmap, ranges scoreboards`,
    /// `memory fixed:200, ideal`).
    fn listed(self, values: &str) -> String {
        match self {
            Part::Kernels | Part::Gpu | Part::Policy => values.to_string(),
            Part::Scoreboard => format!("{values} scoreboards"),
            Part::WarpSlots => format!("{values} warp slots per SM"),
            Part::IssueWidth => format!("issue widths {values}"),
            // Named first: `fixed:200, ideal memory` reads as if only `ideal` were memory.
            Part::Memory => format!("memory {values}"),
        }
    }

    /// The words a file name may say the part's value with, any one of them enough (`sweep`
    /// writes `gto`, `bitmap`, `w16`, `i2`, `mem-fixed200`): none where no single word says it
    /// (several kernels, a study's schemes).
    fn spellings(self, h: &TraceHeader, value: &str) -> Vec<String> {
        match self {
            Part::Kernels if value.contains(", ") => Vec::new(),
            Part::Policy if value == STUDY_POLICY => Vec::new(),
            Part::Kernels | Part::Gpu | Part::Policy | Part::Scoreboard => vec![value.into()],
            Part::WarpSlots => vec![format!("w{value}")],
            Part::IssueWidth => vec![format!("i{value}")],
            Part::Memory => vec![crate::sweep::memory_label(h.config.memory.model)],
        }
    }
}

/// One thing that tells a run from the others, as its caption says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distinction {
    /// `ranges scoreboard`, `16 warp slots per SM`, `memory.dram_latency 400`.
    pub text: String,
    /// Words a file name says it with, any one enough (`ranges`, `w16`); empty when no file
    /// name says it.
    pub spellings: Vec<String>,
}

impl Distinction {
    /// Whether the file name (or path) `name` says it: one of its spellings stands in it
    /// between separators (`.`, `/`, `\`, `-`, `_`) or its ends.
    pub fn said_by(&self, name: &str) -> bool {
        let separator = |c: Option<char>| c.map_or(true, |c| ".-_/\\".contains(c));
        self.spellings.iter().any(|word| {
            !word.is_empty()
                && name.match_indices(word.as_str()).any(|(i, _)| {
                    separator(name[..i].chars().next_back())
                        && separator(name[i + word.len()..].chars().next())
                })
        })
    }
}

/// The captions of traces drawn side by side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captions {
    /// What the traces ran, the parts in which they differ as lists of their values:
    /// `vecAdd<float> on volta (gto) with bitmap, ranges scoreboards`, parts after `with`
    /// kept apart by semicolons (`... scoreboards; 8, 16 warp slots per SM`); for one trace its
    /// kernels, GPU and policy.
    pub subject: String,
    /// Per trace, what tells it from the others (`hopper, lrr`, `ranges scoreboard`), or its
    /// policy, which the subject of a lone trace names too, where nothing does: its
    /// [`Captions::parts`] joined.
    pub distinctions: Vec<String>,
    /// Per trace, the things its distinction says, one by one, so that a label beside a file
    /// name can leave out what the name already says.
    pub parts: Vec<Vec<Distinction>>,
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
        if part.numeric() {
            distinct.sort_by_key(|v| v.parse::<u64>().unwrap_or(u64::MAX));
        }
        // A trace of several kernels already lists them with commas.
        distinct.join(if part == Part::Kernels { " vs " } else { ", " })
    };
    let others = other_differences(headers);
    let mut subject = format!(
        "{} on {} ({})",
        listed(Part::Kernels),
        listed(Part::Gpu),
        listed(Part::Policy)
    );
    let mut with: Vec<String> = [
        Part::Scoreboard,
        Part::WarpSlots,
        Part::IssueWidth,
        Part::Memory,
    ]
    .into_iter()
    .filter(|&p| differs(p))
    .map(|p| p.listed(&listed(p)))
    .collect();
    if !others.is_empty() {
        let fields: Vec<&str> = others.iter().map(|d| config_path(&d.field)).collect();
        with.push(format!("different {}", fields.join(", ")));
    }
    // Each part lists its values with commas, so parts are kept apart by semicolons: `with
    // 8, 16 warp slots per SM; issue widths 1, 2; memory fixed:200, ideal`.
    if !with.is_empty() {
        subject.push_str(" with ");
        subject.push_str(&with.join("; "));
    }
    let differing: Vec<Part> = Part::ALL.into_iter().filter(|&p| differs(p)).collect();
    let parts: Vec<Vec<Distinction>> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut parts: Vec<Distinction> = differing
                .iter()
                .map(|p| {
                    let value = p.value(h);
                    Distinction {
                        text: p.named(&value),
                        spellings: p.spellings(h, &value),
                    }
                })
                .collect();
            for d in others.iter().take(OTHER_FIELDS) {
                let value = match &d.values[i] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                parts.push(Distinction {
                    text: format!("{} {value}", config_path(&d.field)),
                    spellings: Vec::new(),
                });
            }
            if others.len() > OTHER_FIELDS {
                parts.push(Distinction {
                    text: "…".into(),
                    spellings: Vec::new(),
                });
            }
            if parts.is_empty() {
                let value = Part::Policy.value(h);
                parts.push(Distinction {
                    spellings: Part::Policy.spellings(h, &value),
                    text: value,
                });
            }
            parts
        })
        .collect();
    Captions {
        subject,
        distinctions: parts.iter().map(|p| join(p)).collect(),
        parts,
    }
}

/// Distinctions said in a row: `lrr, ranges scoreboard`.
pub fn join(parts: &[Distinction]) -> String {
    let texts: Vec<&str> = parts.iter().map(|d| d.text.as_str()).collect();
    texts.join(", ")
}

/// The config fields, beyond the parts captions name by meaning, that differ between runs on
/// GPUs of one name (another GPU's fields differ by being another GPU, which its name says),
/// with every run's value. A lone trace (every time chart's subject) differs from nothing:
/// its header is not walked.
fn other_differences(headers: &[&TraceHeader]) -> Vec<HeaderDifference> {
    if headers.len() < 2 {
        return Vec::new();
    }
    let named = |field: &str| Part::ALL.iter().any(|p| p.covers(field));
    let mut within_a_gpu: Vec<String> = Vec::new();
    let mut gpus: Vec<&str> = headers.iter().map(|h| h.config.name.as_str()).collect();
    gpus.sort_unstable();
    gpus.dedup();
    for gpu in gpus {
        let same: Vec<&TraceHeader> = headers
            .iter()
            .copied()
            .filter(|h| h.config.name == gpu)
            .collect();
        if same.len() < 2 {
            continue;
        }
        for d in header_differences(&same) {
            if d.field.starts_with("config.")
                && !named(&d.field)
                && !within_a_gpu.contains(&d.field)
            {
                within_a_gpu.push(d.field);
            }
        }
    }
    if within_a_gpu.is_empty() {
        return Vec::new();
    }
    header_differences(headers)
        .into_iter()
        .filter(|d| within_a_gpu.contains(&d.field))
        .collect()
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
                "reduce on small (gto, lrr) with bitmap, ranges scoreboards; {}, 16 warp slots per SM",
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

    #[test]
    fn the_memory_model_and_issue_width_are_named_even_across_gpus() {
        use crate::sim::config::MemoryModel;
        let small = header("reduce.small.gto");
        let hopper = header("divergent.hopper.gto");
        let mut runs = Vec::new();
        for h in [&small, &hopper] {
            for m in [MemoryModel::Ideal, MemoryModel::Fixed { latency: 200 }] {
                let mut h = h.clone();
                h.config.memory.model = m;
                runs.push(h);
            }
        }
        let c = captions(&runs.iter().collect::<Vec<_>>());
        assert!(
            c.subject.ends_with("; memory ideal, fixed:200"),
            "{}",
            c.subject
        );
        assert!(c.distinctions[0].ends_with(", ideal memory"), "{c:?}");
        assert!(c.distinctions[3].ends_with(", fixed:200 memory"), "{c:?}");
        let mut wide = small.clone();
        wide.config.sm.issue_width = 2;
        let c = captions(&[&small, &wide]);
        assert_eq!(c.distinctions[1], "issue width 2");
        assert!(
            c.subject.ends_with("with issue widths 1, 2"),
            "{}",
            c.subject
        );
    }

    #[test]
    fn lists_of_numbers_are_sorted() {
        let base = header("reduce.small.gto");
        let (mut a, mut b) = (base.clone(), base.clone());
        a.config.sm.max_warps = 16;
        b.config.sm.max_warps = 8;
        let c = captions(&[&a, &b]);
        assert!(
            c.subject.ends_with("with 8, 16 warp slots per SM"),
            "{}",
            c.subject
        );
    }

    #[test]
    fn other_fields_that_differ_on_one_gpu_are_named_when_gpus_differ_too() {
        let small = header("reduce.small.gto");
        let mut slow = small.clone();
        slow.config.memory.dram_latency += 100;
        let hopper = header("divergent.hopper.gto");
        let c = captions(&[&small, &slow, &hopper]);
        assert!(
            c.subject.ends_with("different memory.dram_latency"),
            "{}",
            c.subject
        );
        let latency =
            |h: &TraceHeader| format!("memory.dram_latency {}", h.config.memory.dram_latency);
        for (d, h) in c.distinctions.iter().zip([&small, &slow, &hopper]) {
            assert!(d.ends_with(&latency(h)), "{d}");
        }
    }

    #[test]
    fn a_distinction_is_said_by_a_file_name_in_its_own_spelling() {
        let base = header("reduce.small.gto");
        let mut other = base.clone();
        other.config.sm.max_warps = 16;
        other.config.scheduler.scoreboard = ScoreboardKind::Barriers;
        other.config.memory.model = crate::sim::config::MemoryModel::Fixed { latency: 200 };
        let c = captions(&[&base, &other]);
        let said: Vec<bool> = c.parts[1]
            .iter()
            .map(|d| d.said_by("sweep/gto.barriers.w16.mem-fixed200"))
            .collect();
        assert_eq!(said, [true, true, true], "{:?}", c.parts[1]);
        // A number alone, or inside another word, is not the warp slots' spelling.
        let slots = &c.parts[1][1];
        assert_eq!(slots.text, "16 warp slots per SM");
        assert!(!slots.said_by("gto.16"));
        assert!(!slots.said_by("gto.w160"));
        assert!(!c.parts[1][0].said_by("gto.nobarriers"));
    }
}
