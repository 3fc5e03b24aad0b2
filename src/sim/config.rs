//! The GPU configuration: one immutable [`GpuConfig`], validated when built, loadable from JSON
//! or a named preset. The step function takes it by reference; nothing changes it during a run.
//!
//! Presets and where their numbers come from:
//! - `tiny`: seeds/000 exactly — 2 cores, one block of 4 threads per core (warp size 4), the
//!   non-pipelined FETCH→DECODE→REQUEST→WAIT→EXECUTE→UPDATE core (6 cycles per instruction),
//!   ideal memory, one grant per cycle.
//! - `small`: a teaching GPU — 2 SMs, 1 scheduler each, 8 warp slots, warp size 32, small caches.
//! - `volta`: V100 SM (Volta whitepaper; Jia et al., "Dissecting the NVIDIA Volta GPU
//!   Architecture via Microbenchmarking", 2018): 4 sub-partitions, 64 warps, 32 blocks,
//!   65536 registers, 96 KiB shared memory, ALU/FMA latency 4, shared ~19 cycles, L1 hit ~28,
//!   L2 hit ~193, DRAM ~400 cycles in all (from the load's issue, an empty queue); 4 SMs by
//!   default so runs stay fast.
//! - `pascal`: GP102 SM (TITAN X Pascal, as Accel-Sim's `SM6_TITANX` config models it — the GPU
//!   its reference figures for the bundled sm_61 trace come from): 4 sub-partitions, 64 warps,
//!   32 blocks, 65536 registers, 96 KiB shared memory; FP32 and integer latency 4 with a warp
//!   instruction per cycle (32 lanes per sub-partition, no separate integer pipe), SFU 20
//!   cycles at one per 4, shared 24; global loads skip the L1 (`-gpgpu_gmem_skip_L1D 1`, as
//!   GP10x does by default: the L1 is `size_bytes = 0`, its latency 82 what an access with no
//!   active lane costs), L2 hit 202 (the L1 path's 82 plus the L2's 120), DRAM 100 more plus
//!   the queue; 6 sectors/cycle, V100's 4 scaled by the TITAN X's bytes per SM-cycle
//!   (480 GB/s at 1417 MHz over 28 SMs, 1.5× V100's 900 GB/s at 1380 MHz over 80). Pascal
//!   dual issue (a second instruction of the same warp to another unit) is not modelled.
//!   4 SMs by default, as `volta`.
//! - `hopper`: H100 SM (Hopper tuning guide; Luo et al., "Benchmarking and Dissecting the Nvidia
//!   Hopper GPU Architecture", 2024): 4 sub-partitions, 64 warps, 32 blocks, 65536 registers,
//!   228 KiB shared memory, FMA latency 4, shared ~29, L1 ~33, L2 ~260, DRAM ~480 cycles (each
//!   a load's whole latency, as for `volta`).

use crate::isa::Pipe;
use serde::{Deserialize, Serialize};

/// Warp-scheduling policy of each scheduler (seeds/002 and the schemes of seeds/004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Loose round robin: next eligible warp after the last issuer (seed 004's fine-grained
    /// skipping scheme, hence the alias `fine`).
    #[serde(alias = "fine")]
    Lrr,
    /// Greedy then oldest: keep issuing the same warp until it stalls, then the oldest.
    Gto,
    /// Two-level: round robin within an active set of `two_level_active` warps; a warp that
    /// stalls on a long operation leaves the set.
    TwoLevel,
    /// Always the oldest eligible warp.
    Oldest,
    /// Strict rotation: cycle t belongs to warp t mod n whether or not it is ready.
    Barrel,
    /// Run one warp until it stalls on a long operation, then switch, paying `switch_cost`.
    Coarse,
    /// One warp to completion, then the next (seed 004's `none`, its alias).
    #[serde(alias = "none")]
    Sequential,
    /// Several warps share the issue slots of one cycle (SMT from `issue_width` 2 up); the
    /// warp that picks first rotates with the cycle, so at width 1 it is a rotating priority.
    Smt,
}

impl Policy {
    pub const ALL: [Policy; 8] = [
        Policy::Lrr,
        Policy::Gto,
        Policy::TwoLevel,
        Policy::Oldest,
        Policy::Barrel,
        Policy::Coarse,
        Policy::Sequential,
        Policy::Smt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Policy::Lrr => "lrr",
            Policy::Gto => "gto",
            Policy::TwoLevel => "two_level",
            Policy::Oldest => "oldest",
            Policy::Barrel => "barrel",
            Policy::Coarse => "coarse",
            Policy::Sequential => "sequential",
            Policy::Smt => "smt",
        }
    }

    /// What the policy does, in a line: `--help` lists it beside each name.
    pub fn summary(self) -> &'static str {
        match self {
            Policy::Lrr => "loose round robin: the next eligible warp after the last issuer",
            Policy::Gto => {
                "greedy then oldest: the last issuer while it is eligible, else the oldest eligible warp"
            }
            Policy::TwoLevel => {
                "round robin within an active set of scheduler.two_level_active warps; a warp waiting on a long operation leaves the set"
            }
            Policy::Oldest => "the oldest eligible warp, every cycle",
            Policy::Barrel => {
                "strict rotation: cycle t belongs to warp t mod n, issuing or not (slots are lost)"
            }
            Policy::Coarse => {
                "one warp until it waits on a long operation, then the next, paying scheduler.switch_cost refill cycles"
            }
            Policy::Sequential => "one warp to its end, then the next (no multithreading)",
            Policy::Smt => {
                "the warp that picks first rotates each cycle, and later warps fill the slots it leaves: simultaneous multithreading with --issue-width 2 or more; at width 1 a rotating priority"
            }
        }
    }

    /// Seed 004's scheme names for the policies that implement them (the others — barrel,
    /// coarse, smt — have the same names).
    pub const STUDY_ALIASES: [(&'static str, Policy); 2] =
        [("fine", Policy::Lrr), ("none", Policy::Sequential)];

    pub fn from_name(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == s).or_else(|| {
            Policy::STUDY_ALIASES
                .iter()
                .find(|(alias, _)| *alias == s)
                .map(|(_, p)| *p)
        })
    }
}

/// Dependency tracking (seeds/002's three levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreboardKind {
    /// A pending bit per (warp, register); RAW and WAW block issue.
    Bitmap,
    /// A few base+count slots per warp; a full table is a structural stall.
    Ranges,
    /// Compiler-encoded control codes: stall counts and six dependency barriers.
    Barriers,
}

impl ScoreboardKind {
    pub const ALL: [ScoreboardKind; 3] = [
        ScoreboardKind::Bitmap,
        ScoreboardKind::Ranges,
        ScoreboardKind::Barriers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ScoreboardKind::Bitmap => "bitmap",
            ScoreboardKind::Ranges => "ranges",
            ScoreboardKind::Barriers => "barriers",
        }
    }

    /// What the design tracks, in a line: `--help` lists it beside each name.
    pub fn summary(self) -> &'static str {
        match self {
            ScoreboardKind::Bitmap => {
                "a pending bit per warp and register: an instruction waits while a source or destination is pending"
            }
            ScoreboardKind::Ranges => {
                "scheduler.range_slots register ranges per warp: as bitmap, plus a structural stall when a warp's ranges are all in use (at the presets' 4 to 6 slots that is rare)"
            }
            ScoreboardKind::Barriers => {
                "the compiler's control codes: stall counts and six dependency barriers per warp (kernels without them get the auto-control pass)"
            }
        }
    }

    pub fn from_name(s: &str) -> Option<ScoreboardKind> {
        ScoreboardKind::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// How the SM pipeline is organised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CoreModel {
    /// Issue every cycle; results after the pipe latency.
    Pipelined,
    /// seeds/000: one instruction at a time through a fixed number of FSM states; every
    /// instruction (memory included) takes exactly `cycles_per_instruction` cycles.
    NonPipelined { cycles_per_instruction: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipeConfig {
    /// Cycles from issue until the result can be read.
    pub latency: u32,
    /// Cycles between two issues to this pipe from one scheduler.
    pub interval: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipesConfig {
    pub alu: PipeConfig,
    pub fma: PipeConfig,
    pub mufu: PipeConfig,
    /// Shared memory: base latency without bank conflicts; each replay adds `interval`.
    pub shared: PipeConfig,
    /// Global memory issue interval; the latency comes from the memory model.
    pub global: PipeConfig,
    pub branch: PipeConfig,
}

impl PipesConfig {
    pub fn get(&self, pipe: Pipe) -> PipeConfig {
        match pipe {
            Pipe::Alu => self.alu,
            Pipe::Fma => self.fma,
            Pipe::Mufu => self.mufu,
            Pipe::Shared => self.shared,
            Pipe::Global => self.global,
            Pipe::Branch => self.branch,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    pub size_bytes: u32,
    pub line_bytes: u32,
    pub associativity: u32,
    /// Cycles from issue to data for a hit at this level.
    pub hit_latency: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MemoryModel {
    /// Every global access completes after the global pipe latency.
    Ideal,
    /// Every global access takes a fixed number of cycles.
    Fixed { latency: u32 },
    /// Coalescing into 32-byte sectors, L1 per SM, shared L2, bandwidth-limited DRAM.
    Hierarchy,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    pub model: MemoryModel,
    pub sector_bytes: u32,
    pub l1: CacheConfig,
    pub l2: CacheConfig,
    /// What a sector that misses in the L2 adds to the L2's hit latency once the DRAM queue
    /// serves it: a load that misses everywhere takes `l2.hit_latency + dram_latency` plus its
    /// wait in the queue.
    pub dram_latency: u32,
    /// DRAM bandwidth for the whole GPU, in sectors per cycle (may be fractional).
    pub dram_sectors_per_cycle: f64,
    pub shared_banks: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// Sub-partitions, each with its own warp scheduler.
    pub schedulers: u32,
    /// Issue slots per scheduler per cycle.
    pub issue_width: u32,
    pub max_warps: u32,
    pub max_blocks: u32,
    /// 32-bit registers per SM.
    pub registers: u32,
    /// Registers are allocated per warp in units of this many (per thread).
    pub register_granularity: u32,
    pub shared_memory_bytes: u32,
    pub max_threads_per_block: u32,
    pub core: CoreModel,
    /// Cycles from warp launch until its first instruction is fetched.
    pub fetch_latency: u32,
    /// Cycles after a branch until the next instruction is known.
    pub branch_resolve: u32,
    /// In-flight MIO operations (shared memory, MUFU) per SM before `mio_throttle`.
    pub mio_queue: u32,
    /// In-flight global memory instructions per SM before `lg_throttle`.
    pub lsu_queue: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    pub policy: Policy,
    pub scoreboard: ScoreboardKind,
    /// Slots per warp of the `ranges` scoreboard.
    pub range_slots: u32,
    /// Active-set size of the `two_level` policy.
    pub two_level_active: u32,
    /// Refill cycles a `coarse` switch costs.
    pub switch_cost: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    pub name: String,
    pub num_sms: u32,
    pub warp_size: u32,
    /// Blocks the dispatcher may grant per cycle, GPU-wide.
    pub grants_per_cycle: u32,
    pub sm: SmConfig,
    pub scheduler: SchedulerConfig,
    pub pipes: PipesConfig,
    pub memory: MemoryConfig,
    /// Size of the functional global memory, in bytes.
    pub memory_limit: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown GPU preset `{0}` (presets: tiny, small, pascal, volta, hopper)")]
    UnknownPreset(String),
    #[error("gpu config: {field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("gpu config: {0}")]
    Json(String),
}

const fn pipe(latency: u32, interval: u32) -> PipeConfig {
    PipeConfig { latency, interval }
}

impl GpuConfig {
    pub const PRESETS: [&'static str; 5] = ["tiny", "small", "pascal", "volta", "hopper"];
    /// The largest `num_sms` [`GpuConfig::validate`] accepts.
    pub const MAX_SMS: u32 = 1024;
    /// The largest `sm.max_warps`.
    pub const MAX_WARPS: u32 = 1024;
    /// The largest `sm.issue_width`.
    pub const MAX_ISSUE_WIDTH: u32 = 8;

    pub fn preset(name: &str) -> Result<GpuConfig, ConfigError> {
        let config = match name {
            "tiny" => Self::tiny(),
            "small" => Self::small(),
            "pascal" => Self::pascal(),
            "volta" => Self::volta(),
            "hopper" => Self::hopper(),
            other => return Err(ConfigError::UnknownPreset(other.to_string())),
        };
        config.validate()?;
        Ok(config)
    }

    /// Parses and validates a JSON config.
    pub fn from_json(text: &str) -> Result<GpuConfig, ConfigError> {
        // (A byte-order mark from a Windows editor is not JSON.)
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let config: GpuConfig =
            serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    fn tiny() -> GpuConfig {
        let fsm = 6;
        GpuConfig {
            name: "tiny".into(),
            num_sms: 2,
            warp_size: 4,
            grants_per_cycle: 1,
            sm: SmConfig {
                schedulers: 1,
                issue_width: 1,
                max_warps: 1,
                max_blocks: 1,
                registers: 16 * 4,
                register_granularity: 1,
                shared_memory_bytes: 0,
                max_threads_per_block: 4,
                core: CoreModel::NonPipelined {
                    cycles_per_instruction: fsm,
                },
                fetch_latency: 0,
                branch_resolve: 0,
                mio_queue: 1,
                lsu_queue: 1,
            },
            scheduler: SchedulerConfig {
                policy: Policy::Lrr,
                scoreboard: ScoreboardKind::Bitmap,
                range_slots: 4,
                two_level_active: 1,
                switch_cost: 0,
            },
            pipes: PipesConfig {
                alu: pipe(fsm, 1),
                fma: pipe(fsm, 1),
                mufu: pipe(fsm, 1),
                shared: pipe(fsm, 1),
                global: pipe(fsm, 1),
                branch: pipe(fsm, 1),
            },
            memory: MemoryConfig {
                model: MemoryModel::Ideal,
                sector_bytes: 4,
                l1: CacheConfig {
                    size_bytes: 0,
                    line_bytes: 4,
                    associativity: 1,
                    hit_latency: fsm,
                },
                l2: CacheConfig {
                    size_bytes: 0,
                    line_bytes: 4,
                    associativity: 1,
                    hit_latency: fsm,
                },
                dram_latency: fsm,
                dram_sectors_per_cycle: 1.0,
                shared_banks: 1,
            },
            memory_limit: 1 << 20,
        }
    }

    fn small() -> GpuConfig {
        GpuConfig {
            name: "small".into(),
            num_sms: 2,
            warp_size: 32,
            grants_per_cycle: 1,
            sm: SmConfig {
                schedulers: 1,
                issue_width: 1,
                max_warps: 8,
                max_blocks: 8,
                registers: 16384,
                register_granularity: 8,
                shared_memory_bytes: 16384,
                max_threads_per_block: 256,
                core: CoreModel::Pipelined,
                fetch_latency: 2,
                branch_resolve: 2,
                mio_queue: 8,
                lsu_queue: 8,
            },
            scheduler: SchedulerConfig {
                policy: Policy::Gto,
                scoreboard: ScoreboardKind::Bitmap,
                range_slots: 4,
                two_level_active: 4,
                switch_cost: 2,
            },
            pipes: PipesConfig {
                alu: pipe(4, 1),
                fma: pipe(4, 1),
                mufu: pipe(16, 4),
                shared: pipe(20, 1),
                global: pipe(4, 1),
                branch: pipe(2, 1),
            },
            memory: MemoryConfig {
                model: MemoryModel::Hierarchy,
                sector_bytes: 32,
                l1: CacheConfig {
                    size_bytes: 16 * 1024,
                    line_bytes: 128,
                    associativity: 4,
                    hit_latency: 30,
                },
                l2: CacheConfig {
                    size_bytes: 128 * 1024,
                    line_bytes: 128,
                    associativity: 8,
                    hit_latency: 120,
                },
                dram_latency: 300,
                dram_sectors_per_cycle: 2.0,
                shared_banks: 32,
            },
            memory_limit: 256 << 20,
        }
    }

    fn volta() -> GpuConfig {
        GpuConfig {
            name: "volta".into(),
            num_sms: 4,
            warp_size: 32,
            grants_per_cycle: 1,
            sm: SmConfig {
                schedulers: 4,
                issue_width: 1,
                max_warps: 64,
                max_blocks: 32,
                registers: 65536,
                register_granularity: 8,
                shared_memory_bytes: 96 * 1024,
                max_threads_per_block: 1024,
                core: CoreModel::Pipelined,
                fetch_latency: 2,
                branch_resolve: 2,
                mio_queue: 16,
                lsu_queue: 32,
            },
            scheduler: SchedulerConfig {
                policy: Policy::Gto,
                scoreboard: ScoreboardKind::Bitmap,
                range_slots: 6,
                two_level_active: 8,
                switch_cost: 4,
            },
            pipes: PipesConfig {
                alu: pipe(4, 2),
                fma: pipe(4, 2),
                mufu: pipe(18, 8),
                shared: pipe(19, 2),
                global: pipe(4, 2),
                branch: pipe(4, 2),
            },
            memory: MemoryConfig {
                model: MemoryModel::Hierarchy,
                sector_bytes: 32,
                l1: CacheConfig {
                    size_bytes: 32 * 1024,
                    line_bytes: 128,
                    associativity: 4,
                    hit_latency: 28,
                },
                l2: CacheConfig {
                    size_bytes: 512 * 1024,
                    line_bytes: 128,
                    associativity: 16,
                    hit_latency: 193,
                },
                // Jia et al.'s ~400 cycles are a load's whole latency: the DRAM's share is what
                // it adds past the L2.
                dram_latency: 400 - 193,
                dram_sectors_per_cycle: 4.0,
                shared_banks: 32,
            },
            memory_limit: 256 << 20,
        }
    }

    fn pascal() -> GpuConfig {
        let mut c = Self::volta();
        c.name = "pascal".into();
        c.pipes.alu = pipe(4, 1);
        c.pipes.fma = pipe(4, 1);
        c.pipes.mufu = pipe(20, 4);
        c.pipes.shared = pipe(24, 2);
        c.memory.l1 = CacheConfig {
            size_bytes: 0,
            line_bytes: 128,
            associativity: 4,
            hit_latency: 82,
        };
        c.memory.l2.hit_latency = 82 + 120;
        c.memory.dram_latency = 100;
        c.memory.dram_sectors_per_cycle = 6.0;
        c
    }

    fn hopper() -> GpuConfig {
        let mut c = Self::volta();
        c.name = "hopper".into();
        c.sm.shared_memory_bytes = 228 * 1024;
        c.pipes.shared = pipe(29, 2);
        c.pipes.mufu = pipe(16, 8);
        c.memory.l1 = CacheConfig {
            size_bytes: 64 * 1024,
            line_bytes: 128,
            associativity: 4,
            hit_latency: 33,
        };
        c.memory.l2 = CacheConfig {
            size_bytes: 2 * 1024 * 1024,
            line_bytes: 128,
            associativity: 16,
            hit_latency: 260,
        };
        // ~480 in all, as for volta.
        c.memory.dram_latency = 480 - 260;
        c.memory.dram_sectors_per_cycle = 8.0;
        c
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const MAX_LINE_BYTES: u32 = 1 << 16;
        let bad =
            |field: &'static str, message: String| Err(ConfigError::Invalid { field, message });
        if self.name.trim().is_empty() {
            return bad(
                "name",
                "must not be empty: it names the GPU in every report".into(),
            );
        }
        let positive = [
            ("num_sms", self.num_sms),
            ("grants_per_cycle", self.grants_per_cycle),
            ("sm.schedulers", self.sm.schedulers),
            ("sm.issue_width", self.sm.issue_width),
            ("sm.max_warps", self.sm.max_warps),
            ("sm.max_blocks", self.sm.max_blocks),
            ("sm.registers", self.sm.registers),
            ("sm.register_granularity", self.sm.register_granularity),
            ("sm.max_threads_per_block", self.sm.max_threads_per_block),
            ("sm.mio_queue", self.sm.mio_queue),
            ("sm.lsu_queue", self.sm.lsu_queue),
            ("scheduler.range_slots", self.scheduler.range_slots),
            (
                "scheduler.two_level_active",
                self.scheduler.two_level_active,
            ),
            ("memory.sector_bytes", self.memory.sector_bytes),
            ("memory.shared_banks", self.memory.shared_banks),
            ("memory.l1.line_bytes", self.memory.l1.line_bytes),
            ("memory.l2.line_bytes", self.memory.l2.line_bytes),
            ("memory.l1.associativity", self.memory.l1.associativity),
            ("memory.l2.associativity", self.memory.l2.associativity),
        ];
        for (field, value) in positive {
            if value == 0 {
                return bad(field, "must be at least 1".into());
            }
        }
        if self.warp_size == 0 || self.warp_size > 32 {
            return bad(
                "warp_size",
                format!("must be 1..=32, got {}", self.warp_size),
            );
        }
        if self.num_sms > Self::MAX_SMS {
            return bad(
                "num_sms",
                format!("at most {}, got {}", Self::MAX_SMS, self.num_sms),
            );
        }
        if self.sm.schedulers > self.sm.max_warps {
            return bad(
                "sm.schedulers",
                format!(
                    "{} schedulers but only {} warp slots",
                    self.sm.schedulers, self.sm.max_warps
                ),
            );
        }
        if self.sm.issue_width > Self::MAX_ISSUE_WIDTH {
            return bad(
                "sm.issue_width",
                format!("at most {}", Self::MAX_ISSUE_WIDTH),
            );
        }
        if self.sm.max_warps > Self::MAX_WARPS {
            return bad("sm.max_warps", format!("at most {}", Self::MAX_WARPS));
        }
        // (Each SM keeps a slot per block: an unbounded count is unbounded memory.)
        if self.sm.max_blocks > 1024 {
            return bad("sm.max_blocks", "at most 1024".into());
        }
        if self.scheduler.range_slots > 64 {
            return bad("scheduler.range_slots", "at most 64".into());
        }
        if let CoreModel::NonPipelined {
            cycles_per_instruction,
        } = self.sm.core
        {
            if cycles_per_instruction == 0 {
                return bad(
                    "sm.core.cycles_per_instruction",
                    "must be at least 1".into(),
                );
            }
        }
        for (field, p) in [
            ("pipes.alu", self.pipes.alu),
            ("pipes.fma", self.pipes.fma),
            ("pipes.mufu", self.pipes.mufu),
            ("pipes.shared", self.pipes.shared),
            ("pipes.global", self.pipes.global),
            ("pipes.branch", self.pipes.branch),
        ] {
            if p.latency == 0 || p.interval == 0 {
                return bad(field, "latency and interval must be at least 1".into());
            }
            if p.latency > 100_000 || p.interval > 100_000 {
                return bad(field, "latency and interval must be at most 100000".into());
            }
        }
        let m = &self.memory;
        if !(m.dram_sectors_per_cycle.is_finite() && m.dram_sectors_per_cycle > 0.0) {
            return bad(
                "memory.dram_sectors_per_cycle",
                "must be a positive number".into(),
            );
        }
        if let MemoryModel::Fixed { latency } = m.model {
            if latency == 0 {
                return bad("memory.model.latency", "must be at least 1".into());
            }
        }
        // Checked under every memory model: the caches are built (and unused) under the others.
        if !m.sector_bytes.is_power_of_two() || m.sector_bytes > MAX_LINE_BYTES {
            return bad(
                "memory.sector_bytes",
                format!("must be a power of two up to {MAX_LINE_BYTES}"),
            );
        }
        for (field, c) in [("memory.l1", m.l1), ("memory.l2", m.l2)] {
            if !c.line_bytes.is_power_of_two()
                || c.line_bytes % m.sector_bytes != 0
                || c.line_bytes > MAX_LINE_BYTES
            {
                return bad(
                    field,
                    format!("line_bytes must be a power of two up to {MAX_LINE_BYTES} and a multiple of memory.sector_bytes"),
                );
            }
        }
        if m.model == MemoryModel::Hierarchy {
            for (field, c) in [("memory.l1", m.l1), ("memory.l2", m.l2)] {
                let set_bytes = (c.line_bytes as u64 * c.associativity as u64).max(1);
                let size_bytes = c.size_bytes as u64;
                if size_bytes != 0 && size_bytes < set_bytes {
                    return bad(field, "size_bytes is smaller than one set".into());
                }
                // The cache holds whole sets; the rest would silently go unused.
                if size_bytes % set_bytes != 0 {
                    return bad(
                        field,
                        format!(
                            "size_bytes {} is not a whole number of sets of {set_bytes} bytes (line_bytes × associativity); 0 means no cache",
                            c.size_bytes
                        ),
                    );
                }
            }
        }
        if self.memory_limit < 4 || self.memory_limit > (1 << 32) {
            return bad("memory_limit", "must be between 4 bytes and 4 GiB".into());
        }
        Ok(())
    }

    /// Result latency of an instruction on `pipe` when it is fixed, `None` for the
    /// variable-latency pipes (global memory, shared memory with bank conflicts, MUFU queue).
    pub fn fixed_latency(&self, pipe: Pipe) -> Option<u32> {
        if let CoreModel::NonPipelined {
            cycles_per_instruction,
        } = self.sm.core
        {
            return Some(cycles_per_instruction);
        }
        match pipe {
            Pipe::Alu | Pipe::Fma | Pipe::Branch => Some(self.pipes.get(pipe).latency),
            Pipe::Mufu | Pipe::Shared | Pipe::Global => None,
        }
    }

    pub fn warp_slots_per_scheduler(&self) -> u32 {
        self.sm.max_warps.div_ceil(self.sm.schedulers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_scheme_names_are_policy_aliases() {
        assert_eq!(Policy::from_name("fine"), Some(Policy::Lrr));
        assert_eq!(Policy::from_name("none"), Some(Policy::Sequential));
        for scheme in ["barrel", "coarse", "smt"] {
            assert_eq!(Policy::from_name(scheme).map(Policy::name), Some(scheme));
        }
        let p: Policy = serde_json::from_str("\"fine\"").unwrap();
        assert_eq!(p, Policy::Lrr);
        assert_eq!(Policy::from_name("bogus"), None);
    }

    #[test]
    fn a_gpu_without_a_name_is_refused() {
        let mut c = GpuConfig::preset("small").unwrap();
        c.name = " ".into();
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "gpu config: name: must not be empty: it names the GPU in every report"
        );
    }

    #[test]
    fn presets_validate_and_round_trip_through_json() {
        for name in GpuConfig::PRESETS {
            let c = GpuConfig::preset(name).unwrap();
            assert_eq!(GpuConfig::from_json(&c.to_json()).unwrap(), c);
        }
        assert!(matches!(
            GpuConfig::preset("fermi"),
            Err(ConfigError::UnknownPreset(_))
        ));
    }

    #[test]
    fn invalid_fields_are_named() {
        let mut c = GpuConfig::preset("volta").unwrap();
        c.sm.schedulers = 0;
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "gpu config: sm.schedulers: must be at least 1"
        );
        let mut c = GpuConfig::preset("volta").unwrap();
        c.warp_size = 64;
        assert!(c.validate().unwrap_err().to_string().contains("warp_size"));
        let text = GpuConfig::preset("small")
            .unwrap()
            .to_json()
            .replace("\"num_sms\"", "\"num_smz\"");
        assert!(GpuConfig::from_json(&text)
            .unwrap_err()
            .to_string()
            .contains("num_smz"));
        // A cache holds whole sets: 1000 bytes of 512-byte sets would behave as 512.
        let mut c = GpuConfig::preset("volta").unwrap();
        c.memory.l1.size_bytes = 1000;
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("memory.l1: size_bytes 1000 is not a whole number of sets of 512 bytes"));
        c.memory.l1.size_bytes = 0;
        assert!(c.validate().is_ok(), "0 means no cache");
    }

    /// Values a config file can hold that the simulator could not build: they were a panic
    /// (a line size past 2^31 rounds to 0) and an abort (a slot per block allocated up front).
    #[test]
    fn sizes_the_simulator_cannot_build_are_refused() {
        let refused = |c: &GpuConfig, field: &str| {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        };
        for model in [MemoryModel::Ideal, MemoryModel::Hierarchy] {
            let mut c = GpuConfig::preset("volta").unwrap();
            c.memory.model = model;
            c.memory.l2.line_bytes = 0x8000_0001;
            refused(&c, "memory.l2");
            c.memory.l2.line_bytes = 1 << 31;
            refused(&c, "memory.l2");
            let mut c = GpuConfig::preset("volta").unwrap();
            c.memory.model = model;
            c.memory.sector_bytes = 48;
            refused(&c, "memory.sector_bytes");
        }
        // line_bytes × associativity past u32: a whole number of sets, counted in u64.
        let mut c = GpuConfig::preset("volta").unwrap();
        c.memory.l2.line_bytes = 1 << 16;
        c.memory.l2.associativity = 1 << 16;
        refused(&c, "memory.l2");
        let mut c = GpuConfig::preset("small").unwrap();
        c.sm.max_blocks = i32::MAX as u32;
        refused(&c, "sm.max_blocks: at most 1024");
        c.sm.max_blocks = 1024;
        assert!(c.validate().is_ok());
    }
}
