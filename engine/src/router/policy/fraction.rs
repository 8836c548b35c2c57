//! KV usage fractions as small exact ratios: a worker's KV usage is `used / total` blocks,
//! so a decision's usages share a denominator and pack as 16-bit numerators, a quarter of
//! their 64-bit floats. Every ratio is checked to give back the float bit for bit.

use std::cell::Cell;

/// Numerators that fit the packed column.
const MAX_NUMERATOR: i64 = u16::MAX as i64;
/// Largest denominator tried (a GPU's KV blocks number in the thousands to millions).
const MAX_DENOMINATOR: u64 = u32::MAX as u64;
/// Continued-fraction terms tried per value: ratios of 32-bit integers need fewer.
const MAX_TERMS: usize = 48;

/// `v`'s numerator over `den` if `numerator / den` is `v` bit for bit and fits 16 bits.
pub(crate) fn numerator(v: f64, den: u64) -> Option<u16> {
    let d = den as i64 as f64;
    let u = scaled(v, d);
    ((0..=MAX_NUMERATOR).contains(&u) && (u as f64 / d).to_bits() == v.to_bits())
        .then_some(u as u16)
}

/// `v · d` rounded, for a `v` [`numerator`] accepted over `d`: truncating v·d + ½ rounds
/// the non-negative values it accepts (`round` is a library call on baseline x86-64, and
/// signed conversions are one instruction where unsigned ones are several).
pub(crate) fn scaled(v: f64, d: f64) -> i64 {
    (v * d + 0.5) as i64
}

/// Where the next common-denominator search starts: the denominator the last one ended
/// on, as a decision's usages are usually over the pool sizes of the one before. The
/// router keeps one and lends it to its policies' views; a hint only, as the result is the
/// same from any start.
#[derive(Debug)]
pub struct DenominatorHint(Cell<u64>);

impl Default for DenominatorHint {
    fn default() -> Self {
        Self(Cell::new(1))
    }
}

/// The least denominator over which every value of `values` is an exact 16-bit ratio, if
/// there is one of at most 32 bits; the search starts from `hint` (else 1) and leaves
/// where it ended there.
pub(crate) fn common_denominator(
    values: impl Iterator<Item = f64> + Clone,
    hint: Option<&DenominatorHint>,
) -> Option<u64> {
    let start = hint.map_or(1, |h| h.0.get());
    let (den, least) = search(values.clone(), start)
        .or_else(|| (start != 1).then(|| search(values, 1)).flatten())?;
    if let Some(h) = hint {
        h.0.set(den);
    }
    Some(least)
}

/// From `den`, a common denominator of `values` (each value's own least denominator taken
/// into it, by least common multiple, only where the running one does not give the value)
/// and the least one, `den` over the greatest common divisor of it and every numerator:
/// the same from any start, as the least is. None if a numerator outgrows 16 bits.
fn search(values: impl Iterator<Item = f64>, mut den: u64) -> Option<(u64, u64)> {
    // The numerators' greatest common divisor (0 for none yet) and largest.
    let (mut common, mut most) = (0u64, 0u64);
    for v in values {
        let n = match numerator(v, den) {
            Some(n) => n as u64,
            None => {
                let next = lcm(den, own_denominator(v)?).filter(|&d| d <= MAX_DENOMINATOR)?;
                // The numerators so far scale with the denominator.
                let scale = next / den;
                (common, most, den) = (common * scale, most * scale, next);
                if most > MAX_NUMERATOR as u64 {
                    return None;
                }
                numerator(v, den)? as u64
            }
        };
        most = most.max(n);
        if common != 1 {
            common = gcd(common, n);
        }
    }
    Some((den, den / gcd(den, common)))
}

/// The smallest denominator of a continued-fraction convergent of `v` that gives `v`
/// back exactly (None past 32 bits, or for a negative, infinite or NaN `v`).
fn own_denominator(v: f64) -> Option<u64> {
    // Convergents h/k: h(n) = a(n)·h(n−1) + h(n−2), likewise k, from h(−1) = 1, k(−1) = 0.
    let (mut h0, mut h1) = (0u64, 1u64);
    let (mut k0, mut k1) = (1u64, 0u64);
    let mut x = v;
    for _ in 0..MAX_TERMS {
        if !(0.0..=MAX_DENOMINATOR as f64).contains(&x) {
            return None;
        }
        let a = x as u64; // floor, as x ≥ 0
        let h = a.checked_mul(h1)?.checked_add(h0)?;
        let k = a.checked_mul(k1)?.checked_add(k0)?;
        if k > MAX_DENOMINATOR {
            return None;
        }
        if (h as f64 / k as f64).to_bits() == v.to_bits() {
            return Some(k);
        }
        (h0, h1, k0, k1) = (h1, h, k1, k);
        let rest = x - a as f64;
        if rest == 0.0 {
            return None;
        }
        x = 1.0 / rest;
    }
    None
}

/// Greatest common divisor (`gcd(x, 0) = x`).
fn gcd(mut x: u64, mut y: u64) -> u64 {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// Least common multiple, if it fits 64 bits.
fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b)).checked_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Usages of a 30,000-block worker (and its edges) come back exactly.
    #[test]
    fn block_fractions_share_their_pool_size() {
        let total = 30_000u64;
        let used = [0u64, 1, 2, 7_500, 15_000, 29_999, 30_000, 12_345];
        let v = used.iter().map(|&u| u as f64 / total as f64);
        let den = common_denominator(v.clone(), None).unwrap();
        // 30,000 or a multiple: 12,345/30,000 alone reduces to 823/2,000.
        assert_eq!(den % 2_000, 0);
        for (x, &u) in v.zip(&used) {
            let n = numerator(x, den).unwrap() as u64;
            assert_eq!(n * total, u * den, "{u}/{total}");
            assert_eq!((n as f64 / den as f64).to_bits(), x.to_bits());
        }
        assert_eq!(own_denominator(12_345.0 / 30_000.0), Some(2_000));
        assert_eq!(own_denominator(0.0), Some(1));
        assert_eq!(own_denominator(1.0), Some(1));
    }

    /// The least denominator, whatever the search starts from: after a decision over
    /// 30,000 blocks, usages that are all halves and quarters are over 4.
    #[test]
    fn the_denominator_is_the_least_from_any_start() {
        let quarters = [0.25, 0.5, 0.75, 0.0];
        for start in [1, 2, 4, 8, 30_000, 65_536] {
            assert_eq!(search(quarters.into_iter(), start).map(|s| s.1), Some(4));
        }
        // The hint left by a decision over 30,000 blocks (a multiple of 2,000) is where
        // the next search starts, and the answer is still the least.
        let hint = DenominatorHint::default();
        assert_eq!(
            common_denominator([0.5, 12_345.0 / 30_000.0].into_iter(), Some(&hint)),
            Some(2_000)
        );
        assert_eq!(hint.0.get() % 2_000, 0);
        assert_eq!(
            common_denominator(quarters.into_iter(), Some(&hint)),
            Some(4)
        );
        // From a start whose numerators outgrow 16 bits, the search starts over.
        assert_eq!(search([0.5, 1.0 / 3.0].into_iter(), 1 << 20), None);
        hint.0.set(1 << 20);
        assert_eq!(
            common_denominator([0.5, 1.0 / 3.0].into_iter(), Some(&hint)),
            Some(6)
        );
        assert_eq!(hint.0.get(), 6);
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(7, 0), 7);
    }

    /// Two pool sizes (a mixed cluster): their least common multiple serves both.
    #[test]
    fn mixed_pools_take_the_least_common_multiple() {
        let v = [1.0 / 3.0, 2.0 / 7.0, 5.0 / 6.0];
        assert_eq!(common_denominator(v.into_iter(), None), Some(42));
        assert_eq!(lcm(4, 6), Some(12));
        assert_eq!(lcm(u64::MAX, 2), None);
    }

    /// What is not a small ratio is refused, so the caller keeps the float.
    #[test]
    fn other_values_have_no_denominator() {
        for v in [-0.0, -0.5, f64::NAN, f64::INFINITY, 0.1 + 0.2] {
            assert_eq!(common_denominator([0.5, v].into_iter(), None), None, "{v}");
        }
        // A small ratio over a large pool is kept: 1/30,000,000; but not beside one half
        // (15,000,000/30,000,000), nor 3/1,000,000 beside it.
        assert_eq!(
            common_denominator([1.0 / 3.0e7, 0.0].into_iter(), None),
            Some(30_000_000)
        );
        assert_eq!(
            common_denominator([0.5, 1.0 / 3.0e7].into_iter(), None),
            None
        );
        assert_eq!(
            common_denominator([0.5, 3.0 / 1.0e6].into_iter(), None),
            None
        );
        assert_eq!(common_denominator([-0.0].into_iter(), None), None);
        assert_eq!(common_denominator([f64::NAN].into_iter(), None), None);
        assert_eq!(common_denominator([0.5, 1.5].into_iter(), None), Some(2));
        // A numerator past 16 bits: 70,000/70,001.
        assert_eq!(
            common_denominator([70_000.0 / 70_001.0].into_iter(), None),
            None
        );
        assert_eq!(common_denominator(std::iter::empty(), None), Some(1));
    }
}
