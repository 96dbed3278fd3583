//! Edge weights wide enough to hold every pairing criterion at once.
//!
//! Each criterion is a "tier" of the edge weight: a tier outweighs the sum
//! of every lower tier over a whole matching, so the heaviest matching is
//! the best by the criteria in their order. A bracket with many score
//! levels needs more bits than `i128` has, so there is a 512-bit signed
//! integer as well; the narrowest type that fits is used.

use std::cmp::Ordering;
use std::ops::{Add, AddAssign, Sub, SubAssign};

use integer_blossom::Weight;

/// A two's-complement integer of `LIMBS` 64-bit limbs: just what the
/// blossom solver needs (add, subtract, compare, double, halve).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Wide<const LIMBS: usize>([u64; LIMBS]);

/// 512 bits: the widest weights (`Wide<4>`, 256 bits, takes half the
/// memory in the solver's tables and is used when it is enough).
pub type I512 = Wide<8>;

impl<const LIMBS: usize> Wide<LIMBS> {
    pub const ZERO: Wide<LIMBS> = Wide([0; LIMBS]);

    pub fn from_i64(value: i64) -> Self {
        let fill = if value < 0 { u64::MAX } else { 0 };
        let mut limbs = [fill; LIMBS];
        limbs[0] = value as u64;
        Wide(limbs)
    }

    fn negative(&self) -> bool {
        self.0[LIMBS - 1] >> 63 == 1
    }

    /// `self * factor` for a small non-negative factor.
    pub fn mul_small(self, factor: u64) -> Self {
        let negative = self.negative();
        let magnitude = if negative { Self::ZERO - self } else { self };
        let mut out = [0u64; LIMBS];
        let mut carry: u128 = 0;
        for (i, limb) in magnitude.0.iter().enumerate() {
            let product = u128::from(*limb) * u128::from(factor) + carry;
            out[i] = product as u64;
            carry = product >> 64;
        }
        let out = Wide(out);
        if negative { Self::ZERO - out } else { out }
    }

    /// `self * value` for any `i64`.
    #[cfg(test)]
    fn mul_i64(self, value: i64) -> Self {
        let product = self.mul_small(value.unsigned_abs());
        if value < 0 {
            Self::ZERO - product
        } else {
            product
        }
    }

    /// The value as an `i128`, when it fits.
    #[cfg(test)]
    fn to_i128(self) -> Option<i128> {
        let low = (u128::from(self.0[1]) << 64 | u128::from(self.0[0])) as i128;
        let fill = if low < 0 { u64::MAX } else { 0 };
        self.0[2..].iter().all(|&limb| limb == fill).then_some(low)
    }
}

impl<const LIMBS: usize> Add for Wide<LIMBS> {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        let mut out = [0u64; LIMBS];
        let mut carry = false;
        for (i, slot) in out.iter_mut().enumerate() {
            let (sum, c1) = self.0[i].overflowing_add(other.0[i]);
            let (sum, c2) = sum.overflowing_add(u64::from(carry));
            *slot = sum;
            carry = c1 || c2;
        }
        Wide(out)
    }
}

impl<const LIMBS: usize> Sub for Wide<LIMBS> {
    type Output = Self;
    fn sub(self, other: Self) -> Self {
        let mut out = [0u64; LIMBS];
        let mut borrow = false;
        for (i, slot) in out.iter_mut().enumerate() {
            let (diff, b1) = self.0[i].overflowing_sub(other.0[i]);
            let (diff, b2) = diff.overflowing_sub(u64::from(borrow));
            *slot = diff;
            borrow = b1 || b2;
        }
        Wide(out)
    }
}

impl<const LIMBS: usize> AddAssign for Wide<LIMBS> {
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

impl<const LIMBS: usize> SubAssign for Wide<LIMBS> {
    fn sub_assign(&mut self, other: Self) {
        *self = *self - other;
    }
}

impl<const LIMBS: usize> Ord for Wide<LIMBS> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative(), other.negative()) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => {
                for i in (0..LIMBS).rev() {
                    match self.0[i].cmp(&other.0[i]) {
                        Ordering::Equal => {}
                        unequal => return unequal,
                    }
                }
                Ordering::Equal
            }
        }
    }
}

impl<const LIMBS: usize> PartialOrd for Wide<LIMBS> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<const LIMBS: usize> Weight for Wide<LIMBS> {
    const ZERO: Self = Wide([0; LIMBS]);
    const ONE: Self = {
        let mut limbs = [0; LIMBS];
        limbs[0] = 1;
        Wide(limbs)
    };
    fn inf() -> Self {
        let mut limbs = [u64::MAX; LIMBS];
        limbs[LIMBS - 1] = u64::MAX >> 3;
        Wide(limbs)
    }
    fn double(self) -> Self {
        self + self
    }
    fn half(self) -> Self {
        // Arithmetic shift right by one.
        let mut out = [0u64; LIMBS];
        for (i, slot) in out.iter_mut().enumerate() {
            let high = if i + 1 < LIMBS {
                self.0[i + 1] << 63
            } else if self.negative() {
                1 << 63
            } else {
                0
            };
            *slot = (self.0[i] >> 1) | high;
        }
        Wide(out)
    }
}

/// The most bits a packed weight may use in each type, leaving headroom
/// for the solver's doubled duals.
pub const I64_BITS: u32 = 56;
pub const I128_BITS: u32 = 120;
pub const I256_BITS: u32 = 248;
pub const I512_BITS: u32 = 500;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_i128() {
        let values = [0i64, 1, -1, 7, -9, i64::MAX / 3, i64::MIN / 5];
        for &a in &values {
            for &b in &values {
                let (x, y) = (I512::from_i64(a), I512::from_i64(b));
                assert_eq!((x + y).to_i128(), Some(i128::from(a) + i128::from(b)));
                assert_eq!((x - y).to_i128(), Some(i128::from(a) - i128::from(b)));
                assert_eq!(x.cmp(&y), a.cmp(&b));
                assert_eq!(x.mul_i64(b).to_i128(), Some(i128::from(a) * i128::from(b)));
            }
            assert_eq!(I512::from_i64(a).half().to_i128(), Some(i128::from(a) >> 1));
        }
    }
}
