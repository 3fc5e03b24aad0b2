//! Shared-memory banks: `shared_banks` banks (32 on every NVIDIA GPU since Fermi), each 4 bytes
//! wide; word `w` lives in bank `w % banks`. One pass serves one word per bank; lanes reading
//! the same word are served together (broadcast). The conflict degree of a warp access is the
//! largest number of distinct words that fall in one bank, and the access replays
//! `degree - 1` extra passes.
//!
//! Simplifications: every lane accesses one aligned 4-byte word (no 64/128-bit accesses and
//! their half-warp phases); stores and loads are treated alike (stores to the same word merge
//! as broadcasts do); no per-SM shared-memory pipe occupancy is kept here — the SM charges the
//! replays to its MIO pipe with the returned count.

use super::coalesce::coalesce;
use crate::sim::{LaneMask, MAX_WARP_SIZE};

/// Bank counts up to this use a per-bank counter array; more banks sort the bank numbers.
const COUNTED_BANKS: usize = 64;

/// Extra passes a shared-memory access needs beyond the first: the bank-conflict degree minus
/// one, 0 for an empty mask. `banks` of 0 is treated as 1.
pub fn replays(mask: LaneMask, addrs: &[u64; MAX_WARP_SIZE], banks: u32) -> u32 {
    // Distinct words, ascending (the coalescer with 4-byte "sectors").
    let words = coalesce(mask, addrs, 4);
    if words.len() <= 1 {
        return 0;
    }
    let banks = u64::from(banks.max(1));
    let mut degree = 1;
    if banks <= COUNTED_BANKS as u64 {
        // Distinct words are distinct (bank, word) pairs: count words per bank.
        let mut count = [0u8; COUNTED_BANKS];
        let m = banks - 1;
        for &w in words.iter() {
            let word = w >> 2;
            let b = if banks.is_power_of_two() {
                word & m
            } else {
                word % banks
            };
            let c = &mut count[b as usize];
            *c += 1;
            degree = degree.max(*c);
        }
        return u32::from(degree) - 1;
    }
    let mut bank = [0u64; MAX_WARP_SIZE];
    let n = words.len();
    for (b, &w) in bank.iter_mut().zip(words.iter()) {
        *b = (w >> 2) % banks;
    }
    let bank = &mut bank[..n];
    bank.sort_unstable();
    let mut run = 1;
    for i in 1..n {
        if bank[i] == bank[i - 1] {
            run += 1;
            degree = degree.max(run);
        } else {
            run = 1;
        }
    }
    u32::from(degree) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(stride_words: u64) -> [u64; MAX_WARP_SIZE] {
        std::array::from_fn(|i| 4 * stride_words * i as u64)
    }

    #[test]
    fn unit_stride_has_no_conflicts() {
        assert_eq!(replays(u32::MAX, &words(1), 32), 0);
    }

    #[test]
    fn stride_of_two_words_is_a_two_way_conflict() {
        assert_eq!(replays(u32::MAX, &words(2), 32), 1);
    }

    #[test]
    fn stride_of_32_words_hits_one_bank_32_times() {
        assert_eq!(replays(u32::MAX, &words(32), 32), 31);
    }

    #[test]
    fn odd_stride_has_no_conflicts() {
        assert_eq!(replays(u32::MAX, &words(3), 32), 0);
    }

    #[test]
    fn broadcast_and_empty_masks_have_no_conflicts() {
        assert_eq!(replays(u32::MAX, &[0x40; 32], 32), 0);
        assert_eq!(replays(0, &words(32), 32), 0);
    }

    #[test]
    fn same_word_lanes_broadcast_within_a_conflict() {
        // Lanes 0..16 read word 0, lanes 16..32 read word 32: both bank 0, two distinct words.
        let addrs: [u64; 32] = std::array::from_fn(|i| if i < 16 { 0 } else { 128 });
        assert_eq!(replays(u32::MAX, &addrs, 32), 1);
        // Partial mask: only lanes 0 and 2 of a stride-32 pattern.
        assert_eq!(replays(0b101, &words(32), 32), 1);
    }

    #[test]
    fn other_bank_counts() {
        // 16 banks: stride 1 over 32 lanes wraps twice around.
        assert_eq!(replays(u32::MAX, &words(1), 16), 1);
        // 1 bank: every distinct word is a pass.
        assert_eq!(replays(0xff, &words(1), 1), 7);
        // 3 banks (not a power of two): 32 words, 11 in bank 0.
        assert_eq!(replays(u32::MAX, &words(1), 3), 10);
        // 128 banks (sorted path): stride 2 spreads out, stride 64 alternates two banks.
        assert_eq!(replays(u32::MAX, &words(2), 128), 0);
        assert_eq!(replays(u32::MAX, &words(64), 128), 15);
    }
}
