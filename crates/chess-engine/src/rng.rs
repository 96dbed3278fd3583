//! A tiny seedable pseudo-random generator, so that the easy level's choices
//! are reproducible from a seed without pulling in the `rand` crate.

/// SplitMix64 (Steele, Lea and Flood): one 64-bit state, good statistical
/// quality for choosing moves, and trivially reproducible.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `-bound..=bound`.
    pub fn symmetric(&mut self, bound: u32) -> i32 {
        let span = 2 * u64::from(bound) + 1;
        // The modulo bias is below 2^-50 for the small bounds used here.
        (self.next_u64() % span) as i32 - bound as i32
    }

    /// True with probability `1 / n` (never for `n == 0`).
    pub fn one_in(&mut self, n: u32) -> bool {
        n != 0 && self.next_u64().is_multiple_of(u64::from(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_values_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let xs: Vec<i32> = (0..100).map(|_| a.symmetric(50)).collect();
        let ys: Vec<i32> = (0..100).map(|_| b.symmetric(50)).collect();
        let zs: Vec<i32> = (0..100).map(|_| c.symmetric(50)).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert!(xs.iter().all(|x| (-50..=50).contains(x)));
        // Both signs and both extremes' neighbourhoods show up.
        assert!(xs.iter().any(|&x| x > 25) && xs.iter().any(|&x| x < -25));
    }
}
