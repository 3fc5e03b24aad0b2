//! DRAM: one bandwidth-limited queue for the whole GPU (one channel). Sectors that miss in the
//! L2 are served in arrival order, `dram_sectors_per_cycle` of them per cycle (fractional
//! rates allowed); each takes `dram_latency` cycles from the start of its service, so a burst of
//! misses queues up and congestion shows as rising latency.
//!
//! A sector that reaches the queue at cycle `ready` starts at
//! `start = max(ready, free_at)`, the queue is then busy until `free_at = start + 1/bandwidth`,
//! and the data is back at `floor(start) + dram_latency`.
//!
//! Time inside the queue is integer fixed point (32 fractional bits), so fractional bandwidths
//! accumulate exactly the same way on every run and platform; `1/bandwidth` is rounded up, so
//! the model never exceeds the configured bandwidth.
//!
//! Simplifications: no channels, banks, rows or refresh; reads and writes do not contend
//! (stores never reach DRAM because the L2 does not write back); requests are served strictly
//! in the order they are presented.

const FRAC_BITS: u32 = 32;

#[derive(Debug, Clone)]
pub struct Dram {
    /// Cycles per sector, fixed point.
    interval: u128,
    /// When the queue can start the next sector, fixed point.
    free_at: u128,
    latency: u64,
    sectors: u64,
}

impl Dram {
    /// A queue serving `sectors_per_cycle` sectors per cycle (must be positive and finite; a
    /// non-positive rate is treated as one sector per cycle) with `latency` cycles each.
    pub fn new(sectors_per_cycle: f64, latency: u32) -> Dram {
        let one = (1u128 << FRAC_BITS) as f64;
        let interval = if sectors_per_cycle.is_finite() && sectors_per_cycle > 0.0 {
            (one / sectors_per_cycle).ceil() as u128
        } else {
            1u128 << FRAC_BITS
        };
        Dram {
            interval,
            free_at: 0,
            latency: u64::from(latency),
            sectors: 0,
        }
    }

    /// Queues one sector that reaches DRAM at cycle `ready`; returns the cycle its data is back.
    #[inline]
    pub fn read(&mut self, ready: u64) -> u64 {
        let start = (u128::from(ready) << FRAC_BITS).max(self.free_at);
        self.free_at = start + self.interval;
        self.sectors += 1;
        ((start >> FRAC_BITS) as u64).saturating_add(self.latency)
    }

    /// Sectors served so far.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burst(d: &mut Dram, ready: u64, n: usize) -> Vec<u64> {
        (0..n).map(|_| d.read(ready)).collect()
    }

    #[test]
    fn one_sector_per_cycle_serialises_a_burst() {
        let mut d = Dram::new(1.0, 100);
        assert_eq!(burst(&mut d, 10, 4), [110, 111, 112, 113]);
        assert_eq!(d.sectors(), 4);
    }

    #[test]
    fn half_a_sector_per_cycle() {
        let mut d = Dram::new(0.5, 100);
        assert_eq!(burst(&mut d, 0, 3), [100, 102, 104]);
    }

    #[test]
    fn two_sectors_per_cycle() {
        let mut d = Dram::new(2.0, 300);
        assert_eq!(burst(&mut d, 120, 5), [420, 420, 421, 421, 422]);
    }

    #[test]
    fn three_sectors_per_cycle_never_exceeds_the_rate() {
        let mut d = Dram::new(3.0, 10);
        assert_eq!(burst(&mut d, 0, 7), [10, 10, 10, 11, 11, 11, 12]);
    }

    #[test]
    fn an_idle_queue_does_not_bank_bandwidth() {
        let mut d = Dram::new(1.0, 100);
        assert_eq!(burst(&mut d, 0, 2), [100, 101]);
        // Long after the queue drained: served at once, one per cycle again.
        assert_eq!(burst(&mut d, 50, 2), [150, 151]);
        // Arriving while the queue is still busy with the previous burst.
        assert_eq!(d.read(51), 152);
    }
}
