//! A sectored, set-associative cache tag array with true LRU replacement — the model of both
//! the per-SM L1 data cache and the GPU-wide L2. One tag per line of `line_bytes`, a valid bit
//! per sector inside the line (a sector miss in a present line fills just that sector; a line
//! miss evicts the least recently used line of its set, invalid ways first).
//!
//! Beside the valid bit each sector keeps the cycle its data arrives (`ready_at`), so a hit on a
//! sector whose fill is still in flight waits for that fill instead of returning before the
//! data exists — the merge an MSHR performs.
//!
//! Simplifications: only tags and timing are kept (the functional data is in
//! [`super::global`]); no dirty bits or write-back traffic; no MSHR limit, no bank or port
//! conflicts, no tag-lookup bandwidth; the set index is the line address modulo the number of
//! sets (no hashing). If a line holds more than 64 sectors, valid bits are kept for groups of
//! sectors (`line_bytes / 64` bytes each). `size_bytes == 0` means no cache: every access misses
//! and nothing is filled.

use crate::sim::config::CacheConfig;

/// A way reserved by a miss, to be given its data arrival time with [`Cache::fill`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(usize);

impl Slot {
    /// The slot of a disabled cache: filling it does nothing.
    pub const NONE: Slot = Slot(usize::MAX);
}

/// Outcome of [`Cache::access`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The sector is valid; its data is (or will be) there at `ready_at`.
    Hit { ready_at: u64 },
    /// The sector was not valid. It has been allocated (in a present line, or in the line that
    /// replaced the set's LRU line); give it its arrival time with [`Cache::fill`].
    Miss(Slot),
}

/// A line as [`Cache::access_line`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAccess {
    /// Index of the line's first sector in `ready`.
    first: usize,
    /// The line's valid bits before the access.
    pub valid: u64,
}

const INVALID: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub struct Cache {
    sets: u64,
    ways: usize,
    line_shift: u32,
    sector_shift: u32,
    sectors_per_line: usize,
    /// Line address (`addr >> line_shift`) per way, `INVALID` when the way holds no line.
    /// Kept apart from the rest so a set's tags share one or two host cache lines.
    tags: Vec<u64>,
    /// Last-use stamp per way; the smallest in a set is the LRU line. Ways that never held a
    /// line have stamp 0 and every use stamps at least 1, so the minimum finds them first.
    stamps: Vec<u64>,
    /// Valid bit per sector (group), per way.
    valid: Vec<u64>,
    /// `ready_at` per (line, sector).
    ready: Vec<u64>,
    clock: u64,
    /// The way of the last access. The sectors of one coalesced access mostly share a line,
    /// and a line lives in one way of its own set only, so a tag match here is the lookup.
    last: usize,
}

impl Cache {
    /// A cache per `config`, tracking validity per `sector_bytes` sector.
    pub fn new(config: &CacheConfig, sector_bytes: u32) -> Cache {
        let line_bytes = config.line_bytes.max(1).next_power_of_two();
        let line_shift = line_bytes.trailing_zeros();
        let sector_bytes = sector_bytes.clamp(1, line_bytes).next_power_of_two();
        let sector_shift = sector_bytes
            .trailing_zeros()
            .max(line_shift.saturating_sub(6));
        let sectors_per_line = 1usize << (line_shift - sector_shift);
        let ways = config.associativity.max(1) as usize;
        let sets = u64::from(config.size_bytes) / (u64::from(line_bytes) * ways as u64);
        let lines = (sets as usize) * ways;
        Cache {
            sets,
            ways,
            line_shift,
            sector_shift,
            sectors_per_line,
            tags: vec![INVALID; lines],
            stamps: vec![0; lines],
            valid: vec![0; lines],
            ready: vec![0; lines * sectors_per_line],
            clock: 0,
            last: 0,
        }
    }

    /// False when the cache has no capacity (`size_bytes` smaller than one set, e.g. 0).
    pub fn enabled(&self) -> bool {
        self.sets != 0
    }

    #[inline]
    fn locate(&self, addr: u64) -> (u64, usize, u32) {
        let line = addr >> self.line_shift;
        let set = if self.sets.is_power_of_two() {
            line & (self.sets - 1)
        } else {
            line % self.sets
        };
        let sector = ((addr >> self.sector_shift) as usize) & (self.sectors_per_line - 1);
        (line, set as usize * self.ways, sector as u32)
    }

    #[inline]
    fn find(&self, base: usize, line: u64) -> Option<usize> {
        self.tags[base..base + self.ways]
            .iter()
            .position(|&t| t == line)
            .map(|i| base + i)
    }

    /// Looks the sector of `addr` up, updating LRU. A hit returns when its data is ready; a miss
    /// allocates the sector (evicting the set's LRU line if the line is absent).
    #[inline]
    pub fn access(&mut self, addr: u64) -> Lookup {
        if !self.enabled() {
            return Lookup::Miss(Slot::NONE);
        }
        let (line, base, sector) = self.locate(addr);
        self.clock += 1;
        let stamp = self.clock;
        let bit = 1u64 << sector;
        let found = if self.tags[self.last] == line {
            Ok(self.last)
        } else {
            self.find_or_victim(base, line)
        };
        let index = match found {
            Ok(i) => {
                self.last = i;
                self.stamps[i] = stamp;
                if self.valid[i] & bit != 0 {
                    let ready_at = self.ready[i * self.sectors_per_line + sector as usize];
                    return Lookup::Hit { ready_at };
                }
                self.valid[i] |= bit;
                i
            }
            Err(victim) => {
                self.last = victim;
                self.tags[victim] = line;
                self.stamps[victim] = stamp;
                self.valid[victim] = bit;
                victim
            }
        };
        Lookup::Miss(Slot(index * self.sectors_per_line + sector as usize))
    }

    /// The sector granularity of the valid bits: `log2` of the bytes one bit covers.
    pub fn sector_shift(&self) -> u32 {
        self.sector_shift
    }

    /// [`Cache::access`] of each of `sectors` in turn, giving `f` each one's position in
    /// `sectors` and outcome, with one tag lookup and LRU update per line instead of per
    /// sector. `sectors` must ascend and lie in distinct valid bits (distinct sectors of
    /// `1 << sector_shift()` bytes). Then no access of the run can hit a sector that another
    /// one of the run allocated, so the misses' [`Cache::fill`]s may come after the whole run.
    #[inline]
    pub fn access_run(&mut self, sectors: &[u64], mut f: impl FnMut(usize, Lookup)) {
        if !self.enabled() {
            for k in 0..sectors.len() {
                f(k, Lookup::Miss(Slot::NONE));
            }
            return;
        }
        let mut k = 0;
        while k < sectors.len() {
            let line = sectors[k] >> self.line_shift;
            let mut bits = 0;
            let mut end = k;
            while let Some(&s) = sectors.get(end) {
                if s >> self.line_shift != line {
                    break;
                }
                let bit = 1 << self.sector_in_line(s);
                debug_assert!(bits & bit == 0, "sectors of a run share a valid bit");
                bits |= bit;
                end += 1;
            }
            let run = self.access_line(sectors[k], bits, end - k);
            for (j, &s) in sectors[k..end].iter().enumerate() {
                f(k + j, self.lookup(&run, self.sector_in_line(s)));
            }
            k = end;
        }
    }

    /// The index of the valid bit of the sector of `addr` in its line.
    #[inline]
    pub fn sector_in_line(&self, addr: u64) -> u32 {
        self.locate(addr).2
    }

    /// `log2` of the line size.
    pub fn line_shift(&self) -> u32 {
        self.line_shift
    }

    /// [`Cache::access`] of `count` distinct sectors of the line of `addr`, whose valid bits
    /// are `bits` ([`Cache::sector_in_line`]), with one tag lookup and LRU update: the stamps and
    /// the clock come out as `count` accesses would leave them. Each sector's outcome is
    /// [`Cache::lookup`] of the result and its index. The cache must be enabled.
    #[inline]
    pub fn access_line(&mut self, addr: u64, bits: u64, count: usize) -> LineAccess {
        debug_assert!(self.enabled());
        let (line, base, _) = self.locate(addr);
        self.clock += count as u64;
        let stamp = self.clock;
        let found = if self.tags[self.last] == line {
            Ok(self.last)
        } else {
            self.find_or_victim(base, line)
        };
        let (index, valid) = match found {
            Ok(i) => {
                let valid = self.valid[i];
                self.valid[i] |= bits;
                (i, valid)
            }
            Err(victim) => {
                self.tags[victim] = line;
                self.valid[victim] = bits;
                (victim, 0)
            }
        };
        self.last = index;
        self.stamps[index] = stamp;
        LineAccess {
            first: index * self.sectors_per_line,
            valid,
        }
    }

    /// The outcome of sector `sector` (the index of its valid bit) of a line taken by
    /// [`Cache::access_line`].
    #[inline]
    pub fn lookup(&self, line: &LineAccess, sector: u32) -> Lookup {
        if line.valid & (1 << sector) != 0 {
            Lookup::Hit {
                ready_at: self.ready_at(line, sector),
            }
        } else {
            Lookup::Miss(Slot(line.first + sector as usize))
        }
    }

    /// When the data of a sector that [`Cache::access_line`] found valid is there.
    #[inline]
    pub fn ready_at(&self, line: &LineAccess, sector: u32) -> u64 {
        self.ready[line.first + sector as usize]
    }

    /// [`Cache::fill`] of a sector that [`Cache::access_line`] allocated.
    #[inline]
    pub fn fill_sector(&mut self, line: &LineAccess, sector: u32, ready_at: u64) {
        self.ready[line.first + sector as usize] = ready_at;
    }

    /// The way holding `line` in the set starting at `base`, else the way to replace: the
    /// first invalid way, else the one least recently used. One pass over the set: a miss
    /// looks at every way for the tag anyway.
    #[inline]
    fn find_or_victim(&self, base: usize, line: u64) -> Result<usize, usize> {
        let tags = &self.tags[base..base + self.ways];
        let stamps = &self.stamps[base..base + self.ways];
        let mut best = 0;
        let mut oldest = stamps[0];
        for (i, (&t, &s)) in tags.iter().zip(stamps).enumerate() {
            if t == line {
                return Ok(base + i);
            }
            if s < oldest {
                best = i;
                oldest = s;
            }
        }
        Err(base + best)
    }

    /// Records when the data of a sector allocated by a miss arrives.
    #[inline]
    pub fn fill(&mut self, slot: Slot, ready_at: u64) {
        if let Some(r) = self.ready.get_mut(slot.0) {
            *r = ready_at;
        }
    }

    /// Whether the sector of `addr` is valid, without touching LRU.
    pub fn contains(&self, addr: u64) -> bool {
        if !self.enabled() {
            return false;
        }
        let (line, base, sector) = self.locate(addr);
        self.find(base, line)
            .is_some_and(|i| self.valid[i] & (1 << sector) != 0)
    }

    /// Clears the valid bit of the sector of `addr` (the line stays, as does its LRU position).
    pub fn invalidate(&mut self, addr: u64) {
        if !self.enabled() {
            return;
        }
        let (line, base, sector) = self.locate(addr);
        if let Some(i) = self.find(base, line) {
            self.valid[i] &= !(1 << sector);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 sets × 2 ways of 128-byte lines with 32-byte sectors.
    fn two_way() -> Cache {
        Cache::new(
            &CacheConfig {
                size_bytes: 512,
                line_bytes: 128,
                associativity: 2,
                hit_latency: 1,
            },
            32,
        )
    }

    fn miss(c: &mut Cache, addr: u64, ready_at: u64) {
        match c.access(addr) {
            Lookup::Miss(slot) => c.fill(slot, ready_at),
            hit => panic!("0x{addr:x}: expected a miss, got {hit:?}"),
        }
    }

    fn hit(c: &mut Cache, addr: u64) -> u64 {
        match c.access(addr) {
            Lookup::Hit { ready_at } => ready_at,
            m => panic!("0x{addr:x}: expected a hit, got {m:?}"),
        }
    }

    #[test]
    fn lru_eviction_order_in_a_two_way_set() {
        let mut c = two_way();
        // Lines 0x000, 0x100, 0x200 all map to set 0 (line address even).
        miss(&mut c, 0x000, 10);
        miss(&mut c, 0x100, 11);
        assert_eq!(hit(&mut c, 0x000), 10); // 0x000 is now MRU, 0x100 LRU
        miss(&mut c, 0x200, 12); // evicts 0x100
        assert!(c.contains(0x000));
        assert!(!c.contains(0x100));
        assert!(c.contains(0x200));
        miss(&mut c, 0x100, 13); // evicts 0x000 (LRU since the touch of 0x200)
        assert!(!c.contains(0x000));
        assert!(c.contains(0x200));
        // Set 1 was never disturbed.
        miss(&mut c, 0x080, 14);
        assert_eq!(hit(&mut c, 0x080), 14);
        assert_eq!(hit(&mut c, 0x200), 12);
    }

    #[test]
    fn sector_miss_in_a_present_line_fills_only_that_sector() {
        let mut c = two_way();
        miss(&mut c, 0x000, 5);
        assert!(!c.contains(0x020));
        miss(&mut c, 0x020, 7); // same line, other sector: no eviction
        assert_eq!(hit(&mut c, 0x000), 5);
        assert_eq!(hit(&mut c, 0x03c), 7);
        assert!(!c.contains(0x040));
        assert!(!c.contains(0x060));
        // Filling sectors of a present line did not take another way of the set.
        miss(&mut c, 0x100, 8);
        assert!(c.contains(0x000) && c.contains(0x100));
    }

    #[test]
    fn a_run_matches_one_access_per_sector() {
        let sectors = [0x000, 0x020, 0x060, 0x100, 0x140, 0x200, 0x2e0, 0x300];
        let mut one = two_way();
        let mut run = two_way();
        for round in 0..3u64 {
            let mut want = Vec::new();
            for &s in &sectors {
                let l = one.access(s);
                want.push(l);
                if let Lookup::Miss(slot) = l {
                    one.fill(slot, s + round);
                }
            }
            let mut got = Vec::new();
            run.access_run(&sectors, |k, l| got.push((k, l)));
            for &(k, l) in &got {
                if let Lookup::Miss(slot) = l {
                    run.fill(slot, sectors[k] + round);
                }
            }
            let got: Vec<Lookup> = got.into_iter().map(|(_, l)| l).collect();
            assert_eq!(got, want, "round {round}");
            assert_eq!(
                (
                    &run.tags,
                    &run.stamps,
                    &run.valid,
                    &run.ready,
                    run.clock,
                    run.last
                ),
                (
                    &one.tags,
                    &one.stamps,
                    &one.valid,
                    &one.ready,
                    one.clock,
                    one.last
                )
            );
        }
    }

    #[test]
    fn disabled_cache_always_misses() {
        let mut c = Cache::new(
            &CacheConfig {
                size_bytes: 0,
                line_bytes: 128,
                associativity: 4,
                hit_latency: 1,
            },
            32,
        );
        assert!(!c.enabled());
        for _ in 0..3 {
            assert_eq!(c.access(0x40), Lookup::Miss(Slot::NONE));
            c.fill(Slot::NONE, 1);
        }
        assert!(!c.contains(0x40));
    }

    #[test]
    fn invalidate_clears_one_sector() {
        let mut c = two_way();
        miss(&mut c, 0x000, 1);
        miss(&mut c, 0x020, 1);
        c.invalidate(0x020);
        assert!(c.contains(0x000));
        assert!(!c.contains(0x020));
        miss(&mut c, 0x020, 9);
        assert_eq!(hit(&mut c, 0x020), 9);
    }

    #[test]
    fn non_power_of_two_sets_and_wide_lines() {
        // 3 sets of 1 way; 4096-byte lines of 4-byte sectors are tracked in 64-byte groups.
        let mut c = Cache::new(
            &CacheConfig {
                size_bytes: 3 * 4096,
                line_bytes: 4096,
                associativity: 1,
                hit_latency: 1,
            },
            4,
        );
        miss(&mut c, 0, 1);
        assert!(c.contains(60));
        assert!(!c.contains(64));
        miss(&mut c, 3 * 4096, 2); // line 3 → set 0, evicts line 0
        assert!(!c.contains(0));
        miss(&mut c, 4096, 3); // set 1
        assert!(c.contains(3 * 4096));
    }
}
