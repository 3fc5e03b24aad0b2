//! The timing side of the memory system, as the SM engine sees it: given an executed memory
//! instruction (its active lanes' addresses) and the cycle it issues, when does it complete, and
//! which level of the hierarchy served it. Holds one L1 per SM, one L2 and one DRAM queue for
//! the GPU, and the memory counters a profiler reports.
//!
//! Global memory, per [`MemoryModel`]:
//! - `Ideal`: every access completes `pipes.global.latency` cycles after issue;
//!   `Fixed { latency }`: `latency` cycles after issue. Sectors are still counted (coalesced),
//!   the level is [`HitLevel::Ideal`] and the cache counters stay zero.
//! - `Hierarchy`: the access is coalesced into sectors ([`super::coalesce`](mod@super::coalesce)), each handled in
//!   ascending address order:
//!   - loads look up the SM's L1 (hit: `l1.hit_latency`), then the L2 (hit: `l2.hit_latency`,
//!     the sector is filled into the L1), then DRAM ([`super::dram`]: queued from
//!     `cycle + l2.hit_latency`; filled into L2 and L1). The instruction completes with its
//!     slowest sector; a hit on a sector whose fill is still in flight completes when the fill
//!     arrives (never earlier than the hit latency);
//!   - stores are write-through with no allocation in L1 (a present sector is updated in place,
//!     which changes no timing state) and write-allocate in L2 (the sector becomes valid
//!     without a DRAM read); they complete at `cycle + l2.hit_latency`, which the SM uses for
//!     `drain`;
//!   - atomics execute at the L2 (`cycle + l2.hit_latency`, or the DRAM path for sectors that
//!     miss in the L2, which are then filled into the L2) and invalidate the sector in the
//!     issuing SM's L1.
//!
//!   An access with no active lane completes at `cycle + l1.hit_latency` (it still passes
//!   through the load/store pipeline) with level `L1` and no sectors.
//!
//! Shared memory: `cycle + pipes.shared.latency + replays * pipes.shared.interval`, with the
//! replays of [`super::banks`].
//!
//! Counters ([`MemoryStats`]): L1 counters cover load sectors only; L2 counters cover load,
//! store and atomic sectors (a store to an absent L2 sector is an L2 miss that allocates without
//! reading DRAM); `dram_sectors` counts DRAM reads.
//!
//! Simplifications: fills take effect at request time with their arrival cycle recorded (no MSHR
//! limit, no queueing in the L1 or the L2, no interconnect); the L1s are not coherent with each
//! other (as on real GPUs, where only atomics and volatile accesses bypass them); atomics to the
//! same address from different lanes are not serialised; no dirty write-back traffic. The
//! result depends only on the sequence of calls, so the same run gives the same timings.

use super::banks;
use super::cache::{Cache, Lookup, Slot};
use super::coalesce::{coalesce_into, SectorList, MAX_SECTORS};
use super::dram::Dram;
use crate::sim::config::{GpuConfig, MemoryModel};
use crate::sim::exec::{AccessKind, MemAccess};
use serde::{Deserialize, Serialize};

/// The deepest level any sector of a global access reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HitLevel {
    /// The ideal or fixed-latency memory model: no hierarchy.
    Ideal,
    L1,
    L2,
    Dram,
}

/// Timing of one global (or local) memory instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalTiming {
    /// Cycle the last sector's data is back (loads, atomics) or the write is accepted (stores).
    pub complete_at: u64,
    /// Distinct sectors after coalescing.
    pub sectors: u32,
    pub l1_hit_sectors: u32,
    pub l2_hit_sectors: u32,
    /// Sectors read from DRAM.
    pub dram_sectors: u32,
    pub level: HitLevel,
}

/// Timing of one shared-memory instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedTiming {
    pub complete_at: u64,
    /// Extra passes caused by bank conflicts.
    pub replays: u32,
}

/// Memory counters for the whole run, in the spirit of Nsight's `l1tex__t_sectors_*`,
/// `lts__t_sectors_*` and `dram__sectors_*`.
#[derive(Default, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStats {
    /// Global memory instructions (loads, stores and atomics).
    pub global_requests: u64,
    /// Sectors of all global instructions after coalescing.
    pub global_sectors: u64,
    /// Load sectors that hit in an L1.
    pub l1_hit_sectors: u64,
    /// Load sectors that missed in an L1.
    pub l1_miss_sectors: u64,
    /// Load, store and atomic sectors that hit in the L2.
    pub l2_hit_sectors: u64,
    /// Load, store and atomic sectors that missed in the L2.
    pub l2_miss_sectors: u64,
    /// Sectors read from DRAM.
    pub dram_sectors: u64,
    pub shared_requests: u64,
    /// Total bank-conflict replays.
    pub shared_bank_conflicts: u64,
    pub store_requests: u64,
    pub atomic_requests: u64,
}

/// The memory system's timing state: one L1 per SM, the L2, the DRAM queue and the counters.
#[derive(Debug, Clone)]
pub struct MemoryTiming {
    model: MemoryModel,
    sector_bytes: u32,
    ideal_latency: u64,
    l1_latency: u64,
    l2_latency: u64,
    shared_latency: u64,
    shared_interval: u64,
    shared_banks: u32,
    l1: Vec<Cache>,
    l2: Cache,
    dram: Dram,
    stats: MemoryStats,
    /// Every cache keeps a valid bit per coalesced sector, so distinct sectors of an access
    /// are distinct bits and each cache can take an access's sectors a line at a time
    /// ([`Cache::access_run`]).
    by_line: bool,
    /// With `by_line`, when every cache has capacity and lines of this many bytes (`log2`):
    /// the sectors of an access that all lie in one line take each cache with one
    /// [`Cache::access_line`], as valid bits — the common case of a warp reading or writing
    /// consecutive words.
    line_shift: Option<u32>,
    /// The sectors of the access being timed, kept across calls (boxed: taken out and put
    /// back around each one, a pointer moves instead of the list).
    sectors: Option<Box<SectorList>>,
}

impl MemoryTiming {
    /// Empty caches and an idle DRAM queue for `config` (`num_sms` L1s, one L2, one channel).
    pub fn new(config: &GpuConfig) -> MemoryTiming {
        let m = &config.memory;
        let hierarchy = m.model == MemoryModel::Hierarchy;
        let (l1, l2) = if hierarchy {
            (
                (0..config.num_sms)
                    .map(|_| Cache::new(&m.l1, m.sector_bytes))
                    .collect(),
                Cache::new(&m.l2, m.sector_bytes),
            )
        } else {
            // Not consulted: keep no tag arrays.
            let none = crate::sim::config::CacheConfig {
                size_bytes: 0,
                ..m.l2
            };
            (Vec::new(), Cache::new(&none, m.sector_bytes))
        };
        let shift = m.sector_bytes.trailing_zeros();
        let by_line = m.sector_bytes.is_power_of_two()
            && l1.iter().all(|c: &Cache| c.sector_shift() == shift)
            && l2.sector_shift() == shift;
        let line_shift = Some(l2.line_shift()).filter(|&shift| {
            by_line && l2.enabled() && l1.iter().all(|c| c.enabled() && c.line_shift() == shift)
        });
        MemoryTiming {
            by_line,
            line_shift,
            sectors: Some(Box::default()),
            model: m.model,
            sector_bytes: m.sector_bytes,
            ideal_latency: u64::from(config.pipes.global.latency),
            l1_latency: u64::from(m.l1.hit_latency),
            l2_latency: u64::from(m.l2.hit_latency),
            shared_latency: u64::from(config.pipes.shared.latency),
            shared_interval: u64::from(config.pipes.shared.interval),
            shared_banks: m.shared_banks,
            l1,
            l2,
            dram: Dram::new(m.dram_sectors_per_cycle, m.dram_latency),
            stats: MemoryStats::default(),
        }
    }

    /// Times a global (or local) memory instruction issued by SM `sm` at `cycle`. `sm` must be
    /// below `num_sms`.
    pub fn global(&mut self, cycle: u64, sm: u32, access: &MemAccess) -> GlobalTiming {
        let mut sectors = self.sectors.take().unwrap_or_default();
        coalesce_into(access.mask, &access.addrs, self.sector_bytes, &mut sectors);
        let t = self.time_global(cycle, sm, access, &sectors);
        self.sectors = Some(sectors);
        t
    }

    #[inline]
    fn time_global(
        &mut self,
        cycle: u64,
        sm: u32,
        access: &MemAccess,
        sectors: &SectorList,
    ) -> GlobalTiming {
        let stats = &mut self.stats;
        stats.global_requests += 1;
        stats.global_sectors += sectors.len() as u64;
        match access.kind {
            AccessKind::Load => {}
            AccessKind::Store => stats.store_requests += 1,
            AccessKind::Atomic => stats.atomic_requests += 1,
        }
        let mut t = GlobalTiming {
            complete_at: cycle,
            sectors: sectors.len() as u32,
            l1_hit_sectors: 0,
            l2_hit_sectors: 0,
            dram_sectors: 0,
            level: HitLevel::Ideal,
        };
        match self.model {
            MemoryModel::Ideal => {
                t.complete_at = cycle + self.ideal_latency;
                return t;
            }
            MemoryModel::Fixed { latency } => {
                t.complete_at = cycle + u64::from(latency);
                return t;
            }
            MemoryModel::Hierarchy => {}
        }
        if sectors.is_empty() {
            t.complete_at = cycle + self.l1_latency;
            t.level = HitLevel::L1;
            return t;
        }
        let line = match access.kind {
            AccessKind::Atomic => None,
            _ => self.line_bits(sectors),
        };
        match (access.kind, line) {
            (AccessKind::Load, Some(bits)) => self.load_line(cycle, sm, sectors, bits, &mut t),
            (AccessKind::Load, None) if self.by_line => {
                self.load_by_line(cycle, sm, sectors, &mut t)
            }
            (AccessKind::Load, None) => self.load(cycle, sm, sectors, &mut t),
            (AccessKind::Store, Some(bits)) => self.store_line(cycle, sectors, bits, &mut t),
            (AccessKind::Store, None) if self.by_line => self.store_by_line(cycle, sectors, &mut t),
            (AccessKind::Store, None) => self.store(cycle, sectors, &mut t),
            (AccessKind::Atomic, _) => self.atomic(cycle, sm, sectors, &mut t),
        }
        self.stats.l1_hit_sectors += u64::from(t.l1_hit_sectors);
        self.stats.dram_sectors += u64::from(t.dram_sectors);
        t.level = if t.dram_sectors > 0 {
            HitLevel::Dram
        } else if t.l2_hit_sectors > 0 || access.kind != AccessKind::Load {
            HitLevel::L2
        } else {
            HitLevel::L1
        };
        t
    }

    /// The valid bits of `sectors` (not empty) if they all lie in one line, given
    /// [`MemoryTiming::line_shift`].
    #[inline]
    fn line_bits(&self, sectors: &[u64]) -> Option<u64> {
        let shift = self.line_shift?;
        let (first, last) = (sectors[0], sectors[sectors.len() - 1]);
        if first >> shift != last >> shift {
            return None;
        }
        // Ascending and distinct: as many sectors as the span holds means a contiguous run
        // (at most 64 in a line), whose bits need not be gathered one by one.
        let n = sectors.len();
        if (last - first) >> self.sector_bytes.trailing_zeros() == n as u64 - 1 {
            return Some((u64::MAX >> (64 - n)) << self.l2.sector_in_line(first));
        }
        Some(
            sectors
                .iter()
                .fold(0, |bits, &s| bits | 1 << self.l2.sector_in_line(s)),
        )
    }

    /// [`MemoryTiming::load_by_line`] of sectors that lie in one line, with valid bits `bits`:
    /// one lookup in the L1, one in the L2 for the L1's misses, whose sectors go in ascending
    /// order to the L2 and DRAM as they would one by one. (The counts are kept by hand:
    /// without the `popcnt` instruction, `count_ones` is a dozen instructions.)
    fn load_line(&mut self, cycle: u64, sm: u32, sectors: &[u64], bits: u64, t: &mut GlobalTiming) {
        let l1 = &mut self.l1[sm as usize];
        let l1_at = cycle + self.l1_latency;
        let l2_at = cycle + self.l2_latency;
        let mut done = cycle;
        let in_l1 = l1.access_line(sectors[0], bits, sectors.len());
        let hits = in_l1.valid & bits;
        for sector in Ones(hits) {
            t.l1_hit_sectors += 1;
            done = done.max(l1_at.max(l1.ready_at(&in_l1, sector)));
        }
        let misses = bits & !hits;
        let missed = sectors.len() - t.l1_hit_sectors as usize;
        if misses != 0 {
            let in_l2 = self.l2.access_line(sectors[0], misses, missed);
            for sector in Ones(misses) {
                let at = if in_l2.valid & (1 << sector) != 0 {
                    t.l2_hit_sectors += 1;
                    l2_at.max(self.l2.ready_at(&in_l2, sector))
                } else {
                    t.dram_sectors += 1;
                    let at = self.dram.read(l2_at);
                    self.l2.fill_sector(&in_l2, sector, at);
                    at
                };
                l1.fill_sector(&in_l1, sector, at);
                done = done.max(at);
            }
        }
        self.stats.l1_miss_sectors += missed as u64;
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += u64::from(t.dram_sectors);
        t.complete_at = done;
    }

    /// [`MemoryTiming::store_by_line`] of sectors that lie in one line, with valid bits `bits`.
    fn store_line(&mut self, cycle: u64, sectors: &[u64], bits: u64, t: &mut GlobalTiming) {
        let in_l2 = self.l2.access_line(sectors[0], bits, sectors.len());
        let mut misses = 0;
        for sector in Ones(bits & !in_l2.valid) {
            misses += 1;
            self.l2.fill_sector(&in_l2, sector, cycle);
        }
        t.l2_hit_sectors = (sectors.len() - misses) as u32;
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += misses as u64;
        t.complete_at = cycle + self.l2_latency;
    }

    fn load(&mut self, cycle: u64, sm: u32, sectors: &[u64], t: &mut GlobalTiming) {
        let l1 = &mut self.l1[sm as usize];
        let l1_at = cycle + self.l1_latency;
        let l2_at = cycle + self.l2_latency;
        let mut done = cycle;
        for &s in sectors {
            let at = match l1.access(s) {
                Lookup::Hit { ready_at } => {
                    t.l1_hit_sectors += 1;
                    l1_at.max(ready_at)
                }
                Lookup::Miss(l1_slot) => {
                    let at = match self.l2.access(s) {
                        Lookup::Hit { ready_at } => {
                            t.l2_hit_sectors += 1;
                            l2_at.max(ready_at)
                        }
                        Lookup::Miss(l2_slot) => {
                            t.dram_sectors += 1;
                            let at = self.dram.read(l2_at);
                            self.l2.fill(l2_slot, at);
                            at
                        }
                    };
                    l1.fill(l1_slot, at);
                    at
                }
            };
            done = done.max(at);
        }
        let misses = sectors.len() as u64 - u64::from(t.l1_hit_sectors);
        self.stats.l1_miss_sectors += misses;
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += u64::from(t.dram_sectors);
        t.complete_at = done;
    }

    /// [`MemoryTiming::load`] with each cache taking the sectors a line at a time: all L1
    /// lookups, then the L2 lookups of the L1 misses (reading DRAM in the same order), then
    /// the fills, which no lookup of the same access can observe.
    fn load_by_line(&mut self, cycle: u64, sm: u32, sectors: &[u64], t: &mut GlobalTiming) {
        let l1 = &mut self.l1[sm as usize];
        let l1_at = cycle + self.l1_latency;
        let l2_at = cycle + self.l2_latency;
        let mut done = cycle;
        let mut missed = [0u64; MAX_SECTORS];
        let mut l1_slots = [Slot::NONE; MAX_SECTORS];
        let mut misses = 0;
        l1.access_run(sectors, |k, lookup| match lookup {
            Lookup::Hit { ready_at } => {
                t.l1_hit_sectors += 1;
                done = done.max(l1_at.max(ready_at));
            }
            Lookup::Miss(slot) => {
                missed[misses] = sectors[k];
                l1_slots[misses] = slot;
                misses += 1;
            }
        });
        let mut arrive = [0u64; MAX_SECTORS];
        let mut l2_fills = [(Slot::NONE, 0u64); MAX_SECTORS];
        let mut dram_reads = 0;
        let dram = &mut self.dram;
        self.l2.access_run(&missed[..misses], |k, lookup| {
            arrive[k] = match lookup {
                Lookup::Hit { ready_at } => {
                    t.l2_hit_sectors += 1;
                    l2_at.max(ready_at)
                }
                Lookup::Miss(slot) => {
                    let at = dram.read(l2_at);
                    l2_fills[dram_reads] = (slot, at);
                    dram_reads += 1;
                    at
                }
            };
        });
        for &(slot, at) in &l2_fills[..dram_reads] {
            self.l2.fill(slot, at);
        }
        for (&slot, &at) in l1_slots[..misses].iter().zip(&arrive) {
            l1.fill(slot, at);
            done = done.max(at);
        }
        t.dram_sectors += dram_reads as u32;
        self.stats.l1_miss_sectors += misses as u64;
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += u64::from(t.dram_sectors);
        t.complete_at = done;
    }

    /// [`MemoryTiming::store`] with the L2 taking the sectors a line at a time.
    fn store_by_line(&mut self, cycle: u64, sectors: &[u64], t: &mut GlobalTiming) {
        let mut fills = [Slot::NONE; MAX_SECTORS];
        let mut misses = 0;
        self.l2.access_run(sectors, |_, lookup| match lookup {
            Lookup::Hit { .. } => t.l2_hit_sectors += 1,
            Lookup::Miss(slot) => {
                fills[misses] = slot;
                misses += 1;
            }
        });
        for &slot in &fills[..misses] {
            self.l2.fill(slot, cycle);
        }
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += misses as u64;
        t.complete_at = cycle + self.l2_latency;
    }

    fn store(&mut self, cycle: u64, sectors: &[u64], t: &mut GlobalTiming) {
        // L1: write-through, no allocate — a present sector is updated in place, which changes
        // nothing the timing model tracks. L2: write-allocate without a DRAM read.
        for &s in sectors {
            match self.l2.access(s) {
                Lookup::Hit { .. } => t.l2_hit_sectors += 1,
                Lookup::Miss(slot) => self.l2.fill(slot, cycle),
            }
        }
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += sectors.len() as u64 - u64::from(t.l2_hit_sectors);
        t.complete_at = cycle + self.l2_latency;
    }

    fn atomic(&mut self, cycle: u64, sm: u32, sectors: &[u64], t: &mut GlobalTiming) {
        let l1 = &mut self.l1[sm as usize];
        let l2_at = cycle + self.l2_latency;
        let mut done = l2_at;
        for &s in sectors {
            l1.invalidate(s);
            let at = match self.l2.access(s) {
                Lookup::Hit { ready_at } => {
                    t.l2_hit_sectors += 1;
                    l2_at.max(ready_at)
                }
                Lookup::Miss(slot) => {
                    t.dram_sectors += 1;
                    let at = self.dram.read(l2_at);
                    self.l2.fill(slot, at);
                    at
                }
            };
            done = done.max(at);
        }
        self.stats.l2_hit_sectors += u64::from(t.l2_hit_sectors);
        self.stats.l2_miss_sectors += u64::from(t.dram_sectors);
        t.complete_at = done;
    }

    /// Times a shared-memory instruction issued at `cycle`.
    pub fn shared(&mut self, cycle: u64, access: &MemAccess) -> SharedTiming {
        let replays = banks::replays(access.mask, &access.addrs, self.shared_banks);
        self.stats.shared_requests += 1;
        self.stats.shared_bank_conflicts += u64::from(replays);
        SharedTiming {
            complete_at: cycle + self.shared_latency + u64::from(replays) * self.shared_interval,
            replays,
        }
    }

    pub fn stats(&self) -> &MemoryStats {
        &self.stats
    }
}

/// The indices of the set bits of a word, lowest first.
struct Ones(u64);

impl Iterator for Ones {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::exec::Space;
    use crate::sim::LaneMask;

    /// The `small` preset: 2 SMs, L1 16 KiB/128 B/4-way hit 30, L2 128 KiB/128 B/8-way hit 120,
    /// DRAM 300 cycles at 2 sectors per cycle, 32-byte sectors, shared 20 + 1 per replay.
    fn small() -> GpuConfig {
        GpuConfig::preset("small").unwrap()
    }

    fn access(kind: AccessKind, mask: LaneMask, base: u64, stride: u64) -> MemAccess {
        MemAccess {
            space: Space::Global,
            kind,
            mask,
            addrs: std::array::from_fn(|i| base + stride * i as u64),
        }
    }

    fn load(base: u64, stride: u64) -> MemAccess {
        access(AccessKind::Load, u32::MAX, base, stride)
    }

    fn timing(
        complete_at: u64,
        sectors: u32,
        l1: u32,
        l2: u32,
        dram: u32,
        level: HitLevel,
    ) -> GlobalTiming {
        GlobalTiming {
            complete_at,
            sectors,
            l1_hit_sectors: l1,
            l2_hit_sectors: l2,
            dram_sectors: dram,
            level,
        }
    }

    #[test]
    fn ideal_model_uses_the_global_pipe_latency() {
        let mut c = small();
        c.memory.model = MemoryModel::Ideal;
        let mut m = MemoryTiming::new(&c);
        // pipes.global.latency is 4 in `small`.
        assert_eq!(
            m.global(10, 0, &load(0, 4)),
            timing(14, 4, 0, 0, 0, HitLevel::Ideal)
        );
        assert_eq!(
            m.global(11, 1, &load(0, 128)),
            timing(15, 32, 0, 0, 0, HitLevel::Ideal)
        );
        let s = m.stats();
        assert_eq!((s.global_requests, s.global_sectors), (2, 36));
        assert_eq!(
            (s.l1_hit_sectors, s.l1_miss_sectors, s.dram_sectors),
            (0, 0, 0)
        );
    }

    #[test]
    fn fixed_model_uses_its_latency_for_every_kind() {
        let mut c = small();
        c.memory.model = MemoryModel::Fixed { latency: 50 };
        let mut m = MemoryTiming::new(&c);
        for (i, kind) in [AccessKind::Load, AccessKind::Store, AccessKind::Atomic]
            .into_iter()
            .enumerate()
        {
            let t = m.global(i as u64, 0, &access(kind, u32::MAX, 0, 4));
            assert_eq!(t, timing(50 + i as u64, 4, 0, 0, 0, HitLevel::Ideal));
        }
        let s = m.stats();
        assert_eq!((s.store_requests, s.atomic_requests), (1, 1));
    }

    #[test]
    fn first_load_goes_to_dram_then_hits_in_l1() {
        let mut m = MemoryTiming::new(&small());
        // 4 sectors reach DRAM at 0 + 120; two start per cycle: 120, 120, 121, 121; +300.
        assert_eq!(
            m.global(0, 0, &load(0x1000, 4)),
            timing(421, 4, 0, 0, 4, HitLevel::Dram)
        );
        assert_eq!(
            m.global(1000, 0, &load(0x1000, 4)),
            timing(1030, 4, 4, 0, 0, HitLevel::L1)
        );
        let s = m.stats();
        assert_eq!(s.l1_hit_sectors, 4);
        assert_eq!(s.l1_miss_sectors, 4);
        assert_eq!(
            (s.l2_hit_sectors, s.l2_miss_sectors, s.dram_sectors),
            (0, 4, 4)
        );
    }

    #[test]
    fn another_sm_hits_in_the_l2_then_in_its_own_l1() {
        let mut m = MemoryTiming::new(&small());
        m.global(0, 0, &load(0x1000, 4));
        assert_eq!(
            m.global(1000, 1, &load(0x1000, 4)),
            timing(1120, 4, 0, 4, 0, HitLevel::L2)
        );
        assert_eq!(
            m.global(2000, 1, &load(0x1000, 4)),
            timing(2030, 4, 4, 0, 0, HitLevel::L1)
        );
    }

    #[test]
    fn mixed_levels_report_the_deepest_and_the_slowest_sector() {
        let mut m = MemoryTiming::new(&small());
        // Lanes 0..8 read sector 0x1000 (then in L1); the full warp adds 3 DRAM sectors.
        m.global(0, 0, &access(AccessKind::Load, 0xff, 0x1000, 4));
        // At 500: 0x1000 hits in L1 (530); 0x1020..0x1060 reach DRAM at 620: 620, 620, 621.
        assert_eq!(
            m.global(500, 0, &load(0x1000, 4)),
            timing(921, 4, 1, 0, 3, HitLevel::Dram)
        );
    }

    #[test]
    fn a_hit_on_an_in_flight_fill_waits_for_the_data() {
        let mut m = MemoryTiming::new(&small());
        let first = m.global(0, 0, &load(0x1000, 4));
        assert_eq!(first.complete_at, 421);
        // One cycle later the sectors are allocated in the L1 but their data is not back yet.
        assert_eq!(
            m.global(1, 0, &load(0x1000, 4)),
            timing(421, 4, 4, 0, 0, HitLevel::L1)
        );
        // Another SM: L2 hit on the same in-flight sectors.
        assert_eq!(
            m.global(2, 1, &load(0x1000, 4)),
            timing(421, 4, 0, 4, 0, HitLevel::L2)
        );
    }

    #[test]
    fn dram_congestion_raises_latency_exactly_per_the_bandwidth() {
        let mut m = MemoryTiming::new(&small());
        // Stride 128: 32 distinct sectors in 32 lines, all to DRAM at cycle 120, two per cycle:
        // the last starts at 120 + 15 = 135 and completes at 435.
        assert_eq!(
            m.global(0, 0, &load(0, 128)),
            timing(435, 32, 0, 0, 32, HitLevel::Dram)
        );
        // Single-sector loads from the other SM in the same cycle queue behind them.
        let done: Vec<u64> = (0..4)
            .map(|i| m.global(0, 1, &load(0x10_0000 + 32 * i, 0)).complete_at)
            .collect();
        assert_eq!(done, [436, 436, 437, 437]);
        // With one sector per cycle instead.
        let mut c = small();
        c.memory.dram_sectors_per_cycle = 1.0;
        let mut m = MemoryTiming::new(&c);
        let done: Vec<u64> = (0..4)
            .map(|i| m.global(0, 0, &load(0x2000 + 32 * i, 0)).complete_at)
            .collect();
        assert_eq!(done, [420, 421, 422, 423]);
    }

    #[test]
    fn stores_complete_at_the_l2_and_allocate_there_only() {
        let mut m = MemoryTiming::new(&small());
        let store = access(AccessKind::Store, u32::MAX, 0x4000, 4);
        assert_eq!(
            m.global(5, 0, &store),
            timing(125, 4, 0, 0, 0, HitLevel::L2)
        );
        // The L2 now holds the sectors (no DRAM read), the L1 does not.
        assert_eq!(
            m.global(200, 0, &load(0x4000, 4)),
            timing(320, 4, 0, 4, 0, HitLevel::L2)
        );
        // A store over sectors present everywhere still completes at the L2.
        assert_eq!(
            m.global(400, 0, &store),
            timing(520, 4, 0, 4, 0, HitLevel::L2)
        );
        assert_eq!(
            m.global(600, 0, &load(0x4000, 4)),
            timing(630, 4, 4, 0, 0, HitLevel::L1)
        );
        let s = m.stats();
        assert_eq!(s.store_requests, 2);
        assert_eq!(
            (s.l2_hit_sectors, s.l2_miss_sectors, s.dram_sectors),
            (8, 4, 0)
        );
    }

    #[test]
    fn atomics_execute_at_the_l2_and_read_dram_on_a_miss() {
        let mut m = MemoryTiming::new(&small());
        let atom = access(AccessKind::Atomic, u32::MAX, 0x8000, 0);
        // L2 miss: DRAM from 0 + 120, back at 420.
        assert_eq!(
            m.global(0, 0, &atom),
            timing(420, 1, 0, 0, 1, HitLevel::Dram)
        );
        // L2 hit: 1000 + 120.
        assert_eq!(
            m.global(1000, 0, &atom),
            timing(1120, 1, 0, 1, 0, HitLevel::L2)
        );
        // A load brings the sector into the L1; the next atomic invalidates it there.
        m.global(2000, 0, &load(0x8000, 0));
        assert_eq!(m.global(3000, 0, &load(0x8000, 0)).level, HitLevel::L1);
        m.global(4000, 0, &atom);
        assert_eq!(
            m.global(5000, 0, &load(0x8000, 0)),
            timing(5120, 1, 0, 1, 0, HitLevel::L2)
        );
        assert_eq!(m.stats().atomic_requests, 3);
    }

    #[test]
    fn empty_mask_costs_the_l1_latency_and_no_sectors() {
        let mut m = MemoryTiming::new(&small());
        assert_eq!(
            m.global(7, 0, &access(AccessKind::Load, 0, 0, 4)),
            timing(37, 0, 0, 0, 0, HitLevel::L1)
        );
        assert_eq!(m.stats().global_requests, 1);
    }

    #[test]
    fn no_l1_sends_every_load_to_the_l2() {
        let mut c = small();
        c.memory.l1.size_bytes = 0;
        let mut m = MemoryTiming::new(&c);
        m.global(0, 0, &load(0, 4));
        assert_eq!(
            m.global(1000, 0, &load(0, 4)),
            timing(1120, 4, 0, 4, 0, HitLevel::L2)
        );
    }

    #[test]
    fn on_pascal_a_reloaded_sector_comes_from_the_l2() {
        let mut m = MemoryTiming::new(&GpuConfig::preset("pascal").unwrap());
        // First touch: the L2 path's 202 cycles, then DRAM's 100.
        assert_eq!(m.global(0, 0, &load(0, 4)).level, HitLevel::Dram);
        assert_eq!(
            m.global(1000, 0, &load(0, 4)),
            timing(1202, 4, 0, 4, 0, HitLevel::L2)
        );
        assert_eq!(m.stats().l1_hit_sectors, 0);
    }

    #[test]
    fn shared_memory_pays_one_interval_per_replay() {
        let mut c = small();
        c.pipes.shared.interval = 2;
        let mut m = MemoryTiming::new(&c);
        let shared = |stride_words: u64| MemAccess {
            space: Space::Shared,
            ..access(AccessKind::Load, u32::MAX, 0, 4 * stride_words)
        };
        // Latency 20 in `small`.
        assert_eq!(
            m.shared(100, &shared(1)),
            SharedTiming {
                complete_at: 120,
                replays: 0
            }
        );
        assert_eq!(
            m.shared(100, &shared(2)),
            SharedTiming {
                complete_at: 122,
                replays: 1
            }
        );
        assert_eq!(
            m.shared(100, &shared(32)),
            SharedTiming {
                complete_at: 182,
                replays: 31
            }
        );
        assert_eq!(m.shared(100, &shared(0)).replays, 0);
        let s = m.stats();
        assert_eq!((s.shared_requests, s.shared_bank_conflicts), (4, 32));
    }

    #[test]
    fn the_same_sequence_gives_the_same_results() {
        let mut c = small();
        c.memory.dram_sectors_per_cycle = 0.7;
        let run = || {
            let mut m = MemoryTiming::new(&c);
            let mut out = Vec::new();
            for i in 0..400u64 {
                let kind = match i % 5 {
                    3 => AccessKind::Store,
                    4 => AccessKind::Atomic,
                    _ => AccessKind::Load,
                };
                let a = access(
                    kind,
                    (i as u32).wrapping_mul(0x9e37_79b9) | 1,
                    i * 1000 % 70_000,
                    4 + 60 * (i % 3),
                );
                out.push(m.global(i, (i % 2) as u32, &a));
            }
            (out, m.stats().clone())
        };
        let (a, sa) = run();
        let (b, sb) = run();
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        assert!(sa.dram_sectors > 0 && sa.l1_hit_sectors > 0 && sa.l2_hit_sectors > 0);
    }

    #[test]
    fn by_line_and_by_sector_give_the_same_results() {
        // Strides within one line, across lines and scattered; partial masks; all kinds.
        let mut c = small();
        c.memory.dram_sectors_per_cycle = 0.7;
        let run = |by_line: bool, one_line: bool| {
            let mut m = MemoryTiming::new(&c);
            assert!(m.by_line && m.line_shift.is_some());
            m.by_line = by_line;
            if !one_line {
                m.line_shift = None;
            }
            let mut out = Vec::new();
            for i in 0..3000u64 {
                let kind = match i % 7 {
                    3 | 5 => AccessKind::Store,
                    6 => AccessKind::Atomic,
                    _ => AccessKind::Load,
                };
                let mask = match i % 4 {
                    0 => u32::MAX,
                    1 => (i as u32).wrapping_mul(0x9e37_79b9) | 1,
                    2 => 0x0f0f << (i % 16),
                    _ => 1 << (i % 32),
                };
                let stride = [0, 4, 8, 36, 128, 4][(i % 6) as usize];
                let base = i * 1000 % 90_000 + 4 * (i % 3);
                out.push(m.global(i * 3, (i % 2) as u32, &access(kind, mask, base, stride)));
            }
            (out, m.stats().clone())
        };
        let by_sector = run(false, false);
        assert_eq!(run(true, false), by_sector);
        assert_eq!(run(true, true), by_sector);
        let s = &by_sector.1;
        assert!(s.dram_sectors > 0 && s.l1_hit_sectors > 0 && s.l2_hit_sectors > 0);
    }

    #[test]
    fn hit_level_serialises_in_snake_case() {
        assert_eq!(serde_json::to_string(&HitLevel::Dram).unwrap(), "\"dram\"");
        assert_eq!(serde_json::to_string(&HitLevel::L1).unwrap(), "\"l1\"");
        assert_eq!(
            serde_json::from_str::<HitLevel>("\"ideal\"").unwrap(),
            HitLevel::Ideal
        );
    }
}
