//! Device (global) memory contents: byte-addressed, 32-bit little-endian words, allocated on
//! demand in 64 KiB pages up to a configurable limit. Timing is not modelled here.

use crate::sim::MAX_WARP_SIZE;
use rustc_hash::FxHashMap as HashMap;

const PAGE_BITS: u32 = 16;
const PAGE_WORDS: usize = 1 << (PAGE_BITS - 2);

/// Default size of the addressable space: 256 MiB.
pub const DEFAULT_LIMIT_BYTES: u64 = 256 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MemFault {
    #[error("misaligned access at 0x{addr:x} (word accesses need 4-byte alignment)")]
    Misaligned { addr: u64 },
    #[error("access at 0x{addr:x} beyond the memory limit of 0x{limit:x} bytes")]
    OutOfBounds { addr: u64, limit: u64 },
}

/// The word of its page that byte address `addr` is in.
fn word_index(addr: u64) -> usize {
    ((addr as usize) >> 2) & (PAGE_WORDS - 1)
}

fn page_of(addr: u64) -> u32 {
    (addr >> PAGE_BITS) as u32
}

/// Calls `f(lane, word index)` for the lanes of `mask`, lowest first, while their address is on
/// `page`; returns the lanes left from the first one that is not.
fn on_page(
    mask: u32,
    addrs: &[u64; MAX_WARP_SIZE],
    page: u32,
    mut f: impl FnMut(usize, usize),
) -> u32 {
    let mut rest = mask;
    while rest != 0 {
        let lane = rest.trailing_zeros() as usize;
        if page_of(addrs[lane]) != page {
            break;
        }
        f(lane, word_index(addrs[lane]));
        rest &= rest - 1;
    }
    rest
}

#[derive(Debug, Clone)]
pub struct GlobalMemory {
    limit: u64,
    pages: HashMap<u32, Box<[u32]>>,
}

impl Default for GlobalMemory {
    fn default() -> Self {
        GlobalMemory::new(DEFAULT_LIMIT_BYTES)
    }
}

impl GlobalMemory {
    /// A memory of `limit` bytes (rounded down to a word), all zero.
    pub fn new(limit: u64) -> GlobalMemory {
        GlobalMemory {
            limit: limit.min(1 << 32) & !3,
            pages: HashMap::default(),
        }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn check(&self, addr: u64) -> Result<(u32, usize), MemFault> {
        if addr % 4 != 0 {
            return Err(MemFault::Misaligned { addr });
        }
        if addr + 4 > self.limit {
            return Err(MemFault::OutOfBounds {
                addr,
                limit: self.limit,
            });
        }
        Ok((page_of(addr), word_index(addr)))
    }

    /// Checks that a word access at `addr` would succeed, without touching memory.
    pub fn validate(&self, addr: u64) -> Result<(), MemFault> {
        self.check(addr).map(|_| ())
    }

    pub fn read(&self, addr: u64) -> Result<u32, MemFault> {
        let (page, index) = self.check(addr)?;
        Ok(self.pages.get(&page).map_or(0, |p| p[index]))
    }

    pub fn write(&mut self, addr: u64, value: u32) -> Result<(), MemFault> {
        let (page, index) = self.check(addr)?;
        self.pages
            .entry(page)
            .or_insert_with(|| vec![0u32; PAGE_WORDS].into_boxed_slice())[index] = value;
        Ok(())
    }

    /// Adds `value` to the word at `addr` (wrapping) and returns the old value.
    /// For each lane in `mask`, the word at `addrs[lane]` into `out[lane]`. The addresses must
    /// have passed [`GlobalMemory::validate`]. A page is looked up once per run of lanes on it
    /// (a coalesced warp access is on one page).
    pub fn read_lanes(
        &self,
        mask: u32,
        addrs: &[u64; MAX_WARP_SIZE],
        out: &mut [u32; MAX_WARP_SIZE],
    ) {
        let mut rest = mask;
        while rest != 0 {
            let page = page_of(addrs[rest.trailing_zeros() as usize]);
            let words = self.pages.get(&page);
            rest = on_page(rest, addrs, page, |lane, index| {
                out[lane] = words.map_or(0, |w| w[index]);
            });
        }
    }

    /// For each lane in `mask` in lane order, `data[lane]` to the word at `addrs[lane]`, which
    /// must have passed [`GlobalMemory::validate`].
    pub fn write_lanes(
        &mut self,
        mask: u32,
        addrs: &[u64; MAX_WARP_SIZE],
        data: &[u32; MAX_WARP_SIZE],
    ) {
        let mut rest = mask;
        while rest != 0 {
            let page = page_of(addrs[rest.trailing_zeros() as usize]);
            let words = self
                .pages
                .entry(page)
                .or_insert_with(|| vec![0u32; PAGE_WORDS].into_boxed_slice());
            rest = on_page(rest, addrs, page, |lane, index| words[index] = data[lane]);
        }
    }

    pub fn atomic_add(&mut self, addr: u64, value: u32) -> Result<u32, MemFault> {
        let old = self.read(addr)?;
        self.write(addr, old.wrapping_add(value))?;
        Ok(old)
    }

    pub fn write_words(&mut self, addr: u64, words: &[u32]) -> Result<(), MemFault> {
        for (i, w) in words.iter().enumerate() {
            self.write(addr + 4 * i as u64, *w)?;
        }
        Ok(())
    }

    pub fn read_words(&self, addr: u64, count: usize) -> Result<Vec<u32>, MemFault> {
        (0..count as u64).map(|i| self.read(addr + 4 * i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_default_zero() {
        let mut m = GlobalMemory::new(1 << 20);
        assert_eq!(m.read(0x100).unwrap(), 0);
        m.write_words(0xfffc, &[1, 2, 3]).unwrap();
        assert_eq!(m.read_words(0xfffc, 3).unwrap(), vec![1, 2, 3]);
        assert_eq!(m.atomic_add(0x10000, 5).unwrap(), 2);
        assert_eq!(m.read(0x10000).unwrap(), 7);
    }

    #[test]
    fn faults() {
        let mut m = GlobalMemory::new(1024);
        assert_eq!(m.read(2), Err(MemFault::Misaligned { addr: 2 }));
        assert_eq!(
            m.write(1024, 1),
            Err(MemFault::OutOfBounds {
                addr: 1024,
                limit: 1024
            })
        );
        assert!(m.read(1020).is_ok());
    }
}
