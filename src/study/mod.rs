//! Hardware-multithreading issue-slot study: two threads on a `width`-wide superscalar core under
//! five schemes (no multithreading, coarse-grained, barrel, skipping fine-grained and SMT).
//!
//! DOM-free library code: [`run`] generates two instruction streams from a seed and simulates
//! every scheme over the same streams, recording every slot of every cycle. The outputs live
//! beside it: `trace.rs` (a standard warpscope trace), `svg.rs` (the grids), `html.rs` (the
//! animated page); [`render_text`] and [`render_json`] are the tables.

pub mod html;
pub mod svg;
pub mod trace;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::fmt::Write as _;

/// Probabilities of the stall after each group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StallPreset {
    None,
    Light,
    Mixed,
    Heavy,
}

impl StallPreset {
    pub const ALL: [StallPreset; 4] = [
        StallPreset::None,
        StallPreset::Light,
        StallPreset::Mixed,
        StallPreset::Heavy,
    ];

    /// `(none, dep, miss)` probabilities, summing to 1.
    pub fn probabilities(self) -> (f64, f64, f64) {
        match self {
            StallPreset::None => (1.0, 0.0, 0.0),
            StallPreset::Light => (0.7, 0.2, 0.1),
            StallPreset::Mixed => (0.5, 0.25, 0.25),
            StallPreset::Heavy => (0.3, 0.3, 0.4),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StallPreset::None => "none",
            StallPreset::Light => "light",
            StallPreset::Mixed => "mixed",
            StallPreset::Heavy => "heavy",
        }
    }
}

/// Settings of one study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudyConfig {
    /// Issue slots per cycle (at least 1).
    pub width: usize,
    /// Largest group of independent instructions (at least 1).
    pub ilp: usize,
    pub stalls: StallPreset,
    /// Miss latency in cycles.
    pub lat: usize,
    /// Refill cycles paid by each coarse-grained switch on a miss (a finished thread hands
    /// over for free).
    pub switch_cost: usize,
    /// Groups per thread.
    pub groups: usize,
    pub seed: u64,
}

/// Seed of [`StudyConfig::default`]: the five schemes finish in five distinct times
/// (none 84, coarse 62, barrel 53, fine 48, smt 45 cycles).
pub const DEFAULT_SEED: u64 = 0;

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig {
            width: 4,
            ilp: 3,
            stalls: StallPreset::Mixed,
            lat: 6,
            switch_cost: 2,
            groups: 12,
            seed: DEFAULT_SEED,
        }
    }
}

/// Largest accepted `groups`, `lat` and `switch_cost`: keeps grids and pages a sane size.
pub const MAX_GROUPS: usize = 1000;
pub const MAX_LATENCY: usize = 1000;
/// Largest accepted `width` (issue slots per cycle) and `ilp` (group size).
pub const MAX_WIDTH: usize = 8;
pub const MAX_ILP: usize = 16;

/// A study that cannot be run or written.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("study: --{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("study: {cycles} cycles are too many to draw (at most {max}): use fewer --groups, a smaller --lat or fewer --scheme")]
    TooLongToDraw { cycles: usize, max: usize },
    #[error(transparent)]
    Config(#[from] crate::sim::config::ConfigError),
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
}

impl StallPreset {
    pub fn from_name(s: &str) -> Option<StallPreset> {
        StallPreset::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl StudyConfig {
    /// The settings in words, `sep` between them, as the grids and the page head them.
    pub fn describe(&self, sep: &str) -> String {
        [
            format!("width {}", self.width),
            format!("ilp {}", self.ilp),
            format!("stalls {}", self.stalls.name()),
            format!("lat {}", self.lat),
            format!("switch cost {}", self.switch_cost),
            format!("{} groups", self.groups),
            format!("seed {}", self.seed),
        ]
        .join(sep)
    }

    /// Checks every setting; the error names the first bad one.
    pub fn validate(&self) -> Result<(), StudyError> {
        let bad =
            |field: &'static str, message: String| Err(StudyError::Invalid { field, message });
        if !(1..=MAX_WIDTH).contains(&self.width) {
            return bad(
                "width",
                format!("must be 1..={MAX_WIDTH}, got {}", self.width),
            );
        }
        if !(1..=MAX_ILP).contains(&self.ilp) {
            return bad("ilp", format!("must be 1..={MAX_ILP}, got {}", self.ilp));
        }
        if !(1..=MAX_GROUPS).contains(&self.groups) {
            return bad(
                "groups",
                format!("must be 1..={MAX_GROUPS}, got {}", self.groups),
            );
        }
        if self.lat > MAX_LATENCY {
            return bad("lat", format!("at most {MAX_LATENCY}, got {}", self.lat));
        }
        if self.switch_cost > MAX_LATENCY {
            return bad(
                "switch-cost",
                format!("at most {MAX_LATENCY}, got {}", self.switch_cost),
            );
        }
        Ok(())
    }
}

/// The stall after a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stall {
    None,
    /// One-cycle dependency stall.
    Dep,
    /// Miss of `lat` cycles.
    Miss,
}

impl Stall {
    /// Cycles the thread waits after the group's last issue cycle.
    pub fn cycles(self, lat: usize) -> usize {
        match self {
            Stall::None => 0,
            Stall::Dep => 1,
            Stall::Miss => lat,
        }
    }

    fn cause(self) -> Option<Cause> {
        match self {
            Stall::None => None,
            Stall::Dep => Some(Cause::Dep),
            Stall::Miss => Some(Cause::Miss),
        }
    }
}

/// A group of independent instructions and the stall after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Group {
    pub size: usize,
    pub stall: Stall,
}

/// The five schemes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    None,
    Coarse,
    Barrel,
    Fine,
    Smt,
}

impl Scheme {
    pub fn from_name(s: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|p| p.name() == s)
    }

    pub const ALL: [Scheme; 5] = [
        Scheme::None,
        Scheme::Coarse,
        Scheme::Barrel,
        Scheme::Fine,
        Scheme::Smt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::None => "none",
            Scheme::Coarse => "coarse",
            Scheme::Barrel => "barrel",
            Scheme::Fine => "fine",
            Scheme::Smt => "smt",
        }
    }

    /// Whether at most one thread issues per cycle.
    pub fn single_issuer(self) -> bool {
        self != Scheme::Smt
    }
}

/// The stall carried by the last instruction of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    Miss,
    Dep,
}

/// What one issue slot did in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SlotUse {
    Instruction {
        thread: usize,
        group: usize,
        index: usize,
        cause: Option<Cause>,
    },
    /// A coarse-grained switch refilling the pipeline.
    Refill { from: usize, to: usize },
    /// Lost in a cycle where nothing issued.
    VerticalWaste,
    /// Unused in a cycle where something issued.
    HorizontalWaste,
}

/// A thread's state in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreadState {
    /// Issued this cycle.
    Run,
    /// Stalled on a miss.
    Miss,
    /// Stalled on a one-cycle dependency.
    Dep,
    /// Ready but not picked.
    Wait,
    /// Finished.
    Done,
}

/// One cycle of a schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CycleRecord {
    pub cycle: usize,
    pub slots: Vec<SlotUse>,
    pub threads: [ThreadState; 2],
}

impl CycleRecord {
    /// Threads that issued at least one instruction this cycle.
    pub fn issuers(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for s in &self.slots {
            if let SlotUse::Instruction { thread, .. } = s {
                if !out.contains(thread) {
                    out.push(*thread);
                }
            }
        }
        out
    }

    pub fn instructions(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| matches!(s, SlotUse::Instruction { .. }))
            .count()
    }

    pub fn is_refill(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s, SlotUse::Refill { .. }))
    }
}

/// Slot accounting of one scheme; the four counts sum to `width × cycles`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SlotCounts {
    pub instruction: usize,
    pub refill: usize,
    pub vertical_waste: usize,
    pub horizontal_waste: usize,
}

impl SlotCounts {
    pub fn total(&self) -> usize {
        self.instruction + self.refill + self.vertical_waste + self.horizontal_waste
    }
}

/// The schedule of one scheme.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchemeResult {
    pub scheme: Scheme,
    pub cycles: usize,
    pub instructions: usize,
    pub slots: SlotCounts,
    pub grid: Vec<CycleRecord>,
}

impl SchemeResult {
    pub fn ipc(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.instructions as f64 / self.cycles as f64
        }
    }

    /// The scheme's figures in words, `sep` between them, as the grids and the page show them
    /// beside its name.
    pub fn describe(&self, sep: &str) -> String {
        [
            format!("{} cycles", self.cycles),
            format!("IPC {:.2}", self.ipc()),
            format!("{} issued", self.slots.instruction),
            format!("{} refill", self.slots.refill),
            format!("{} vertical", self.slots.vertical_waste),
            format!("{} horizontal waste", self.slots.horizontal_waste),
        ]
        .join(sep)
    }
}

/// Generates the two streams: thread 0 then thread 1 from one `StdRng::seed_from_u64(seed)`.
pub fn generate_streams(cfg: &StudyConfig) -> [Vec<Group>; 2] {
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let ilp = cfg.ilp.max(1);
    let (p_none, p_dep, _) = cfg.stalls.probabilities();
    let gen = |rng: &mut StdRng| {
        (0..cfg.groups)
            .map(|g| {
                let size = rng.gen_range(1..=ilp);
                let stall = if g + 1 == cfg.groups {
                    Stall::None
                } else {
                    let r: f64 = rng.gen();
                    if r < p_none {
                        Stall::None
                    } else if r < p_none + p_dep {
                        Stall::Dep
                    } else {
                        Stall::Miss
                    }
                };
                Group { size, stall }
            })
            .collect::<Vec<_>>()
    };
    let t0 = gen(&mut rng);
    let t1 = gen(&mut rng);
    [t0, t1]
}

/// A thread's progress through its stream.
struct Thread<'a> {
    groups: &'a [Group],
    group: usize,
    issued: usize,
    ready_at: usize,
    /// Stall kind of the last completed group.
    stall: Stall,
}

impl<'a> Thread<'a> {
    fn new(groups: &'a [Group]) -> Self {
        Thread {
            groups,
            group: 0,
            issued: 0,
            ready_at: 0,
            stall: Stall::None,
        }
    }

    fn done(&self) -> bool {
        self.group >= self.groups.len()
    }

    fn ready(&self, t: usize) -> bool {
        !self.done() && t >= self.ready_at
    }

    fn state(&self, t: usize) -> ThreadState {
        if self.done() {
            ThreadState::Done
        } else if t < self.ready_at {
            match self.stall {
                Stall::Miss => ThreadState::Miss,
                _ => ThreadState::Dep,
            }
        } else {
            ThreadState::Wait
        }
    }

    /// Issues up to `slots` instructions of the current group at cycle `t`.
    fn issue(&mut self, id: usize, t: usize, slots: usize, lat: usize, out: &mut Vec<SlotUse>) {
        let g = self.groups[self.group];
        let n = (g.size - self.issued).min(slots);
        for _ in 0..n {
            let last = self.issued + 1 == g.size;
            out.push(SlotUse::Instruction {
                thread: id,
                group: self.group,
                index: self.issued,
                cause: if last { g.stall.cause() } else { None },
            });
            self.issued += 1;
        }
        if self.issued == g.size {
            self.group += 1;
            self.issued = 0;
            self.stall = g.stall;
            self.ready_at = t + 1 + g.stall.cycles(lat);
        }
    }
}

/// Simulates one scheme over the given streams.
pub fn simulate(scheme: Scheme, streams: &[Vec<Group>; 2], cfg: &StudyConfig) -> SchemeResult {
    let width = cfg.width.max(1);
    let lat = cfg.lat;
    let mut th = [Thread::new(&streams[0]), Thread::new(&streams[1])];
    let mut grid: Vec<CycleRecord> = Vec::new();
    let mut cur = 0usize; // coarse: running thread
    let mut last = 1usize; // fine: last issuer
    let mut t = 0usize;
    while !(th[0].done() && th[1].done()) {
        if scheme == Scheme::Coarse {
            // A finished thread hands over for free, as `none` runs thread 1 after thread 0:
            // with no misses coarse-grained is no multithreading at all, and must cost the same.
            // (The loop runs only while a thread is live, so the other one is.)
            if th[cur].done() {
                cur = 1 - cur;
            }
            // Only a miss switches away from a live thread, and that pays the refill.
            let other = 1 - cur;
            let switch = !th[cur].ready(t) && th[cur].stall == Stall::Miss && th[other].ready(t);
            if switch {
                for _ in 0..cfg.switch_cost {
                    grid.push(CycleRecord {
                        cycle: t,
                        slots: vec![
                            SlotUse::Refill {
                                from: cur,
                                to: other
                            };
                            width
                        ],
                        threads: [th[0].state(t), th[1].state(t)],
                    });
                    t += 1;
                }
                cur = other;
            }
        }
        let mut states = [th[0].state(t), th[1].state(t)];
        let order: Vec<usize> = match scheme {
            Scheme::None => vec![if th[0].done() { 1 } else { 0 }],
            Scheme::Coarse => vec![cur],
            Scheme::Barrel => {
                let owner = if th[0].done() {
                    1
                } else if th[1].done() {
                    0
                } else {
                    t % 2
                };
                vec![owner]
            }
            Scheme::Fine => {
                let next = 1 - last;
                if th[next].ready(t) {
                    vec![next]
                } else {
                    vec![last]
                }
            }
            Scheme::Smt => {
                let first = t % 2;
                vec![first, 1 - first]
            }
        };
        let mut slots = Vec::with_capacity(width);
        for &id in &order {
            if th[id].ready(t) && slots.len() < width {
                let free = width - slots.len();
                th[id].issue(id, t, free, lat, &mut slots);
                states[id] = ThreadState::Run;
                last = id;
            }
        }
        let filler = if slots.is_empty() {
            SlotUse::VerticalWaste
        } else {
            SlotUse::HorizontalWaste
        };
        slots.resize(width, filler);
        grid.push(CycleRecord {
            cycle: t,
            slots,
            threads: states,
        });
        t += 1;
    }
    let mut counts = SlotCounts::default();
    for rec in &grid {
        for s in &rec.slots {
            match s {
                SlotUse::Instruction { .. } => counts.instruction += 1,
                SlotUse::Refill { .. } => counts.refill += 1,
                SlotUse::VerticalWaste => counts.vertical_waste += 1,
                SlotUse::HorizontalWaste => counts.horizontal_waste += 1,
            }
        }
    }
    SchemeResult {
        scheme,
        cycles: grid.len(),
        instructions: counts.instruction,
        slots: counts,
        grid,
    }
}

/// Generates the streams and simulates every scheme, in [`Scheme::ALL`] order.
pub fn run(cfg: &StudyConfig) -> Vec<SchemeResult> {
    let streams = generate_streams(cfg);
    Scheme::ALL
        .iter()
        .map(|&s| simulate(s, &streams, cfg))
        .collect()
}

/// A text table: scheme, cycles, IPC and the four slot counts.
pub fn render_text(results: &[SchemeResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<8} {:>7} {:>6} {:>12} {:>7} {:>9} {:>11}",
        "scheme", "cycles", "IPC", "instructions", "refill", "vertical", "horizontal"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<8} {:>7} {:>6.2} {:>12} {:>7} {:>9} {:>11}",
            r.scheme.name(),
            r.cycles,
            r.ipc(),
            r.slots.instruction,
            r.slots.refill,
            r.slots.vertical_waste,
            r.slots.horizontal_waste
        );
    }
    out
}

/// Longest schedule the SVG and the page draw: beyond it the files run to tens of megabytes.
pub const MAX_DRAWN_CYCLES: usize = 2000;

/// Whether `results` are short enough for [`svg::render`] and [`html::render`].
pub fn check_drawable(results: &[SchemeResult]) -> Result<(), StudyError> {
    let cycles = results.iter().map(|r| r.cycles).max().unwrap_or(0);
    if cycles > MAX_DRAWN_CYCLES {
        return Err(StudyError::TooLongToDraw {
            cycles,
            max: MAX_DRAWN_CYCLES,
        });
    }
    Ok(())
}

/// The JSON form: `{"settings":{...},"schemes":[{"scheme","cycles","instructions","ipc","slots"}]}`.
/// The results as CSV, a row per scheme with the settings on every row, so that the rows of
/// several runs (another `--seed`, another `--width`) can be concatenated under one header
/// and averaged by a plotting script.
pub fn render_csv(cfg: &StudyConfig, results: &[SchemeResult]) -> String {
    let mut out = String::from(
        "seed,width,ilp,stalls,lat,switch_cost,groups,scheme,cycles,instructions,ipc,issued,refill,vertical_waste,horizontal_waste\n",
    );
    for r in results {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            cfg.seed,
            cfg.width,
            cfg.ilp,
            cfg.stalls.name(),
            cfg.lat,
            cfg.switch_cost,
            cfg.groups,
            r.scheme.name(),
            r.cycles,
            r.instructions,
            r.ipc(),
            r.slots.instruction,
            r.slots.refill,
            r.slots.vertical_waste,
            r.slots.horizontal_waste,
        );
    }
    out
}

pub fn render_json(cfg: &StudyConfig, results: &[SchemeResult]) -> String {
    let schemes: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            serde_json::json!({
                "scheme": r.scheme.name(),
                "cycles": r.cycles,
                "instructions": r.instructions,
                // Unrounded, as `analyze --format json` gives it: a script compares the two.
                "ipc": r.ipc(),
                "slots": {
                    "issued": r.slots.instruction,
                    "refill": r.slots.refill,
                    "vertical_waste": r.slots.vertical_waste,
                    "horizontal_waste": r.slots.horizontal_waste,
                },
            })
        })
        .collect();
    let doc = serde_json::json!({ "settings": cfg, "schemes": schemes });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
