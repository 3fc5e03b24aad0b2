//! The SM's pending events by due cycle, taken in (due cycle, push order) — the order a binary
//! heap keyed on (cycle, sequence number) gives, without its per-event sift.
//!
//! Most events are due a few to a few hundred cycles after they are pushed, so the next
//! [`WINDOW`] cycles each have a bucket, filled in push order, in a ring; events due later wait
//! in a heap and move into their bucket as the window reaches them — before any event is pushed
//! into that bucket directly, so a bucket stays in push order. A bit per bucket says which are
//! occupied: the window moves over empty ones a word of bits at a time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles covered by the ring of buckets (a power of two).
const WINDOW: u64 = 1024;
const WORDS: usize = (WINDOW / 64) as usize;

#[derive(Debug, Clone)]
pub(super) struct EventQueue {
    /// Bucket `c % WINDOW` holds the events due at cycle `c`, for `base <= c < base + WINDOW`.
    ring: Vec<Vec<usize>>,
    /// Bit `b` set: bucket `b` is not empty.
    occupied: [u64; WORDS],
    /// Events in the ring.
    in_ring: usize,
    /// Every event due before this cycle has been taken.
    base: u64,
    /// Events of bucket `base` already taken (the bucket is emptied with its last one).
    taken: usize,
    /// Events pushed already due (before `base`), in push order, with their due cycle.
    overdue: Vec<(u64, usize)>,
    /// Events due at or after `base + WINDOW`, by (due cycle, sequence number).
    far: BinaryHeap<Reverse<(u64, u64, usize)>>,
    seq: u64,
    /// No event is due before this cycle: lowered by each push, raised by
    /// [`EventQueue::ran_dry`]. Most cycles of an SM have no event due, and this tells them
    /// apart in one comparison.
    quiet_until: u64,
}

impl EventQueue {
    pub(super) fn new() -> EventQueue {
        EventQueue {
            ring: vec![Vec::new(); WINDOW as usize],
            occupied: [0; WORDS],
            in_ring: 0,
            base: 0,
            taken: 0,
            overdue: Vec::new(),
            far: BinaryHeap::new(),
            seq: 0,
            quiet_until: u64::MAX,
        }
    }

    /// Queues `item` to be taken at cycle `at`.
    #[inline]
    pub(super) fn push(&mut self, at: u64, item: usize) {
        self.quiet_until = self.quiet_until.min(at);
        // One comparison for both bounds: below `base` wraps to a huge offset.
        if at.wrapping_sub(self.base) < WINDOW {
            self.put_in_ring(at, item);
        } else {
            self.push_outside(at, item);
        }
    }

    /// [`EventQueue::push`] of an event not due inside the window (out of line: rare).
    #[inline(never)]
    fn push_outside(&mut self, at: u64, item: usize) {
        if at < self.base {
            self.overdue.push((at, item));
        } else {
            self.seq += 1;
            self.far.push(Reverse((at, self.seq, item)));
        }
    }

    #[inline]
    fn put_in_ring(&mut self, at: u64, item: usize) {
        let b = (at % WINDOW) as usize;
        self.ring[b].push(item);
        self.occupied[b / 64] |= 1 << (b % 64);
        self.in_ring += 1;
    }

    /// The next event due at or before `cycle`, in (due cycle, push order). Always inlined:
    /// called once per event and once more per SM-cycle with events, its call cost about as
    /// much as its body, and the compiler's choice came out either way as unrelated code
    /// changed.
    #[inline(always)]
    pub(super) fn pop_due(&mut self, cycle: u64) -> Option<usize> {
        if !self.overdue.is_empty() {
            // All due before `base`, pushed within one cycle: push order is due order.
            return Some(self.overdue.remove(0).1);
        }
        while self.base <= cycle {
            let b = (self.base % WINDOW) as usize;
            if let Some(&item) = self.ring[b].get(self.taken) {
                self.taken += 1;
                self.in_ring -= 1;
                if self.taken == self.ring[b].len() {
                    self.ring[b].clear();
                    self.occupied[b / 64] &= !(1 << (b % 64));
                    self.taken = 0;
                }
                return Some(item);
            }
            self.advance(cycle);
        }
        None
    }

    /// Whether [`EventQueue::pop_due`] may find an event due at or before `cycle` (if not,
    /// calling it is not needed: the window catches up when it is next called).
    #[inline]
    pub(super) fn may_be_due(&self, cycle: u64) -> bool {
        cycle >= self.quiet_until
    }

    /// No event is due before the returned cycle (a lower bound, as for
    /// [`EventQueue::may_be_due`]); `u64::MAX` when no event is pending at all.
    #[inline]
    pub(super) fn due_bound(&self) -> u64 {
        let empty = self.in_ring == 0 && self.overdue.is_empty() && self.far.is_empty();
        match empty {
            true => u64::MAX,
            false => self.quiet_until,
        }
    }

    /// To be called once [`EventQueue::pop_due`] has found nothing more due (kept out of it:
    /// inlined there, it kept that from being inlined): raises the bound of
    /// [`EventQueue::may_be_due`] to the first occupied bucket among those of `base`'s word of
    /// `occupied`, else the end of that word (nothing is overdue, and the far events are due
    /// after the whole window).
    #[inline]
    pub(super) fn ran_dry(&mut self) {
        let b = (self.base % WINDOW) as usize;
        let bits = self.occupied[b / 64] >> (b % 64);
        self.quiet_until = if bits != 0 {
            self.base + u64::from(bits.trailing_zeros())
        } else {
            self.base + (64 - (b % 64)) as u64
        };
    }

    /// Bucket `base` is empty (emptied when its last event was taken): the window moves on to
    /// the first occupied bucket, or to `cycle + 1` if none is due by `cycle`, and takes in
    /// the far events it now covers. A jump over empty buckets leaves the queue as a step at a
    /// time would: no far event is due before `base + WINDOW`, so none is jumped over. Inlined
    /// into `pop_due` for the same reason: it runs about once per SM-cycle with events.
    #[inline(always)]
    fn advance(&mut self, cycle: u64) {
        self.base = self.first_occupied(self.base + 1, (cycle + 1).min(self.base + WINDOW));
        while let Some(&Reverse((at, _, item))) = self.far.peek() {
            if at >= self.base + WINDOW {
                break;
            }
            self.far.pop();
            self.put_in_ring(at, item);
        }
    }

    /// The first cycle from `from` (after `base`) to `limit` (at most `base + WINDOW`) whose
    /// bucket is occupied, else `limit`: a word of `occupied` at a time.
    #[inline(always)]
    fn first_occupied(&self, from: u64, limit: u64) -> u64 {
        let mut c = from;
        while c < limit {
            let b = (c % WINDOW) as usize;
            let bits = self.occupied[b / 64] >> (b % 64);
            if bits != 0 {
                return (c + u64::from(bits.trailing_zeros())).min(limit);
            }
            c += (64 - b % 64) as u64;
        }
        limit
    }

    /// The due cycle of the next event, if any.
    pub(super) fn next_due(&self) -> Option<u64> {
        if let Some(&(at, _)) = self.overdue.first() {
            return Some(at);
        }
        if self.in_ring > 0 {
            // The first occupied bucket from `base` on, around the ring.
            let start = (self.base % WINDOW) as usize;
            for k in 0..=WORDS {
                let w = (start / 64 + k) % WORDS;
                let mut bits = self.occupied[w];
                if k == 0 {
                    bits &= u64::MAX << (start % 64);
                } else if k == WORDS {
                    bits &= !(u64::MAX << (start % 64));
                }
                if bits != 0 {
                    let b = (w * 64 + bits.trailing_zeros() as usize) as u64;
                    let offset = (b + WINDOW - start as u64) % WINDOW;
                    return Some(self.base + offset);
                }
            }
        }
        self.far.peek().map(|Reverse((at, _, _))| *at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes everything due by `cycle`.
    fn due(q: &mut EventQueue, cycle: u64) -> Vec<usize> {
        let taken = std::iter::from_fn(|| q.pop_due(cycle)).collect();
        q.ran_dry();
        taken
    }

    #[test]
    fn same_order_as_a_heap_on_cycle_and_sequence() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut q = EventQueue::new();
        let mut heap = BinaryHeap::new();
        let mut seq = 0u64;
        let mut cycle = 0u64;
        for _ in 0..20_000 {
            for _ in 0..rng.gen_range(0..4) {
                let at = cycle
                    + match rng.gen_range(0..4) {
                        0 => 0,
                        1 => rng.gen_range(1..8),
                        2 => rng.gen_range(1..2000),
                        _ => rng.gen_range(1..5000),
                    };
                seq += 1;
                q.push(at, seq as usize);
                heap.push(Reverse((at, seq, seq as usize)));
            }
            let want_next = heap.peek().map(|Reverse((at, _, _))| *at);
            assert_eq!(q.next_due(), want_next);
            cycle += if rng.gen_bool(0.1) {
                want_next.map_or(1, |n| n.saturating_sub(cycle).max(1))
            } else {
                1
            };
            let mut want = Vec::new();
            while let Some(&Reverse((at, _, item))) = heap.peek() {
                if at > cycle {
                    break;
                }
                heap.pop();
                want.push(item);
            }
            // A queue that says nothing is due is not asked (so its window lags), or is asked
            // and must find nothing.
            let taken = if q.may_be_due(cycle) || rng.gen_bool(0.5) {
                due(&mut q, cycle)
            } else {
                Vec::new()
            };
            assert_eq!(taken, want, "cycle {cycle}");
        }
    }
}
