//! The coalescer of the load/store unit: turns the per-lane byte addresses of one warp memory
//! instruction into the set of distinct memory sectors it touches — the unit in which the L1,
//! the L2 and DRAM move data (32 bytes on every NVIDIA GPU since Maxwell). One per SM in
//! hardware; here a pure function.
//!
//! Simplifications: every lane accesses one aligned 4-byte word, so a lane touches exactly the
//! sector that holds its address (with `sector_bytes < 4` only the sector of the word's first
//! byte is counted). Requests are not split into 128-byte "requests" as Nsight's `l1tex__t_requests`
//! does; one instruction is one request.
//!
//! Cost: no allocation; sectors are kept in a fixed 32-entry buffer (the caller's, with
//! [`coalesce_into`]) and inserted in order, which is linear for the common ascending
//! (unit-stride) and broadcast patterns.

use crate::sim::exec::MemAccess;
use crate::sim::{LaneMask, MAX_WARP_SIZE};

/// At most one sector per lane.
pub const MAX_SECTORS: usize = MAX_WARP_SIZE;

/// The distinct sectors of one access, ascending, as sector base byte addresses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SectorList {
    len: usize,
    sectors: [u64; MAX_SECTORS],
}

impl Default for SectorList {
    fn default() -> Self {
        SectorList {
            len: 0,
            sectors: [0; MAX_SECTORS],
        }
    }
}

impl std::fmt::Debug for SectorList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl SectorList {
    pub fn as_slice(&self) -> &[u64] {
        &self.sectors[..self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts `value` keeping the list ascending and unique. At most `MAX_SECTORS` distinct
    /// values can arrive because there is one per lane. Out of line: [`sectors_of`] appends
    /// ascending lanes itself.
    #[inline(never)]
    fn insert(&mut self, value: u64) {
        let len = self.len;
        if len == 0 || value > self.sectors[len - 1] {
            if len < MAX_SECTORS {
                self.sectors[len] = value;
                self.len = len + 1;
            }
            return;
        }
        if value == self.sectors[len - 1] {
            return;
        }
        if let Err(pos) = self.sectors[..len].binary_search(&value) {
            if len < MAX_SECTORS {
                self.sectors.copy_within(pos..len, pos + 1);
                self.sectors[pos] = value;
                self.len = len + 1;
            }
        }
    }
}

impl std::ops::Deref for SectorList {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

/// The distinct `sector_bytes`-sized sectors holding the addresses of the lanes set in `mask`,
/// ascending, as sector base addresses. `sector_bytes` of 0 is treated as 1.
pub fn coalesce(mask: LaneMask, addrs: &[u64; MAX_WARP_SIZE], sector_bytes: u32) -> SectorList {
    let mut list = SectorList::default();
    coalesce_into(mask, addrs, sector_bytes, &mut list);
    list
}

/// [`coalesce`] into `list` (its previous contents are replaced): a caller that keeps one list
/// neither clears nor copies its several hundred bytes per access.
#[inline]
pub fn coalesce_into(
    mask: LaneMask,
    addrs: &[u64; MAX_WARP_SIZE],
    sector_bytes: u32,
    list: &mut SectorList,
) {
    let sector = u64::from(sector_bytes.max(1));
    if sector.is_power_of_two() {
        let align = !(sector - 1);
        if mask == LaneMask::MAX {
            // Each step between aligned sectors is a multiple of `sector`: it is 0 or `sector`
            // exactly when it has no other bit (a descending step wraps to high bits). Only
            // ANDs and ORs: the check runs in vector registers.
            let mut other_bits = 0;
            for (&a, &b) in addrs[..MAX_WARP_SIZE - 1].iter().zip(&addrs[1..]) {
                other_bits |= ((b & align).wrapping_sub(a & align)) & !sector;
            }
            if other_bits == 0 {
                sector_range(
                    addrs[0] & align,
                    addrs[MAX_WARP_SIZE - 1] & align,
                    sector,
                    list,
                );
                return;
            }
        }
        sectors_of(mask, addrs, |a| a & align, list)
    } else {
        let base = |a: u64| a - a % sector;
        if mask == LaneMask::MAX {
            let mut gap = false;
            for pair in addrs.windows(2) {
                // Wraps to a huge step for a descending pair.
                gap |= base(pair[1]).wrapping_sub(base(pair[0])) > sector;
            }
            if !gap {
                // At most one new sector per lane: the range has at most `MAX_SECTORS` of them.
                sector_range(base(addrs[0]), base(addrs[MAX_WARP_SIZE - 1]), sector, list);
                return;
            }
        }
        sectors_of(mask, addrs, base, list)
    }
}

/// `list` becomes the sectors from `first` to `last`, which are at most [`MAX_SECTORS`] apart.
#[inline(always)]
fn sector_range(first: u64, last: u64, sector: u64, list: &mut SectorList) {
    let n = (((last - first) / sector) as usize + 1).min(MAX_SECTORS);
    let mut s = first;
    for slot in &mut list.sectors[..n] {
        *slot = s;
        s += sector;
    }
    list.len = n;
}

/// [`coalesce`] lane by lane, with the sector of an address given by `base`, for what is not
/// a full warp over a contiguous range of sectors (which [`coalesce_into`] recognises first,
/// without branches per lane). Lanes in ascending order of address only append or repeat the
/// last sector, which is kept in a register; any other order goes through the sorted insert.
#[inline(always)]
fn sectors_of(
    mask: LaneMask,
    addrs: &[u64; MAX_WARP_SIZE],
    base: impl Fn(u64) -> u64,
    list: &mut SectorList,
) {
    let mut len = 0;
    let mut last = 0;
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let s = base(addrs[lane]);
        if len > 0 && s == last {
            continue;
        }
        if (len == 0 || s > last) && len < MAX_SECTORS {
            list.sectors[len] = s;
            len += 1;
            last = s;
            continue;
        }
        list.len = len;
        list.insert(s);
        len = list.len;
        last = list.sectors[len - 1];
    }
    list.len = len;
}

/// [`coalesce`] applied to an executed memory instruction.
pub fn coalesce_access(access: &MemAccess, sector_bytes: u32) -> SectorList {
    coalesce(access.mask, &access.addrs, sector_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strided(base: u64, stride: u64) -> [u64; MAX_WARP_SIZE] {
        std::array::from_fn(|i| base + stride * i as u64)
    }

    #[test]
    fn unit_stride_warp_touches_four_sectors() {
        let s = coalesce(u32::MAX, &strided(0x1000, 4), 32);
        assert_eq!(s.as_slice(), &[0x1000, 0x1020, 0x1040, 0x1060]);
    }

    #[test]
    fn misaligned_unit_stride_touches_five_sectors() {
        let s = coalesce(u32::MAX, &strided(0x1010, 4), 32);
        assert_eq!(s.as_slice(), &[0x1000, 0x1020, 0x1040, 0x1060, 0x1080]);
    }

    #[test]
    fn stride_128_touches_one_sector_per_lane() {
        let s = coalesce(u32::MAX, &strided(0, 128), 32);
        assert_eq!(s.len(), 32);
        assert_eq!(s[0], 0);
        assert_eq!(s[31], 31 * 128);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn broadcast_is_one_sector() {
        let s = coalesce(u32::MAX, &[0x2044; 32], 32);
        assert_eq!(s.as_slice(), &[0x2040]);
    }

    #[test]
    fn partial_masks_count_only_active_lanes() {
        let addrs = strided(0, 4);
        // Lanes 0..8 are the first sector, lanes 24..32 the fourth.
        assert_eq!(coalesce(0x0000_00ff, &addrs, 32).as_slice(), &[0]);
        assert_eq!(coalesce(0xff00_00ff, &addrs, 32).as_slice(), &[0, 0x60]);
        assert_eq!(coalesce(0x0000_0101, &addrs, 32).as_slice(), &[0, 0x20]);
        assert!(coalesce(0, &addrs, 32).is_empty());
    }

    #[test]
    fn descending_and_scattered_addresses_come_back_ascending_and_unique() {
        let mut addrs = strided(0, 0);
        for (i, a) in addrs.iter_mut().enumerate() {
            // 31*64, 30*64, ... with every other lane repeating its neighbour's sector.
            *a = ((31 - i as u64) / 2) * 64 + 8;
        }
        let s = coalesce(u32::MAX, &addrs, 32);
        let expected: Vec<u64> = (0..16).map(|k| k * 64).collect();
        assert_eq!(s.as_slice(), expected.as_slice());
    }

    #[test]
    fn full_warps_that_do_not_ascend_take_the_lane_by_lane_path() {
        let mut addrs = strided(0x1000, 4);
        addrs.swap(3, 20);
        let s = coalesce(u32::MAX, &addrs, 32);
        assert_eq!(s.as_slice(), &[0x1000, 0x1020, 0x1040, 0x1060]);
        addrs[31] = 0x10;
        let s = coalesce(u32::MAX, &addrs, 32);
        assert_eq!(s.as_slice(), &[0, 0x1000, 0x1020, 0x1040, 0x1060]);
    }

    #[test]
    fn full_warps_with_gaps_or_repeats_match_the_lane_by_lane_walk() {
        // Strides around the sector size, ascending and descending, aligned or not.
        for stride in [0u64, 1, 4, 8, 16, 31, 32, 33, 64, 128] {
            for start in [0u64, 4, 28, 0x1010] {
                let up: [u64; MAX_WARP_SIZE] = std::array::from_fn(|i| start + stride * i as u64);
                let down: [u64; MAX_WARP_SIZE] =
                    std::array::from_fn(|i| start + stride * (31 - i) as u64);
                for addrs in [up, down] {
                    let mut want: Vec<u64> = addrs.iter().map(|a| a & !31).collect();
                    want.sort_unstable();
                    want.dedup();
                    assert_eq!(coalesce(u32::MAX, &addrs, 32).as_slice(), want.as_slice());
                    let mut want: Vec<u64> = addrs.iter().map(|a| a - a % 12).collect();
                    want.sort_unstable();
                    want.dedup();
                    assert_eq!(coalesce(u32::MAX, &addrs, 12).as_slice(), want.as_slice());
                }
            }
        }
    }

    #[test]
    fn word_sectors_and_non_power_of_two_sectors() {
        let addrs = strided(0, 4);
        assert_eq!(coalesce(0xf, &addrs, 4).as_slice(), &[0, 4, 8, 12]);
        assert_eq!(coalesce(0xff, &addrs, 12).as_slice(), &[0, 12, 24]);
    }
}
