//! KV usage fractions as small exact ratios: a worker's KV usage is `used / total` blocks,
//! so a decision's usages share a denominator and pack as 16-bit numerators, a quarter of
//! their 64-bit floats. Every ratio is checked to give back the float bit for bit.

/// Numerators that fit the packed column.
const MAX_NUMERATOR: u64 = u16::MAX as u64;
/// Largest denominator tried (a GPU's KV blocks number in the thousands to millions).
const MAX_DENOMINATOR: u64 = u32::MAX as u64;
/// Continued-fraction terms tried per value: ratios of 32-bit integers need fewer.
const MAX_TERMS: usize = 48;

/// `v`'s numerator over `den` if `numerator / den` is `v` bit for bit and fits 16 bits.
pub(crate) fn numerator(v: f64, den: u64) -> Option<u16> {
    // Truncating v·den + ½ rounds it for the non-negative values this can succeed on
    // (`round` is a library call on baseline x86-64); the check rejects everything else.
    let u = (v * den as f64 + 0.5) as u64;
    (u <= MAX_NUMERATOR && (u as f64 / den as f64).to_bits() == v.to_bits()).then_some(u as u16)
}

/// A denominator over which every value of `values` is an exact 16-bit ratio, if there
/// is one of at most 32 bits: the least common multiple of each value's own smallest
/// denominator (found only for values the running one does not already give).
pub(crate) fn common_denominator(values: impl Iterator<Item = f64>) -> Option<u64> {
    let mut den = 1;
    for v in values {
        if numerator(v, den).is_none() {
            den = lcm(den, own_denominator(v)?).filter(|&d| d <= MAX_DENOMINATOR)?;
            numerator(v, den)?;
        }
    }
    Some(den)
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

/// Least common multiple, if it fits 64 bits.
fn lcm(a: u64, b: u64) -> Option<u64> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x).checked_mul(b)
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
        let den = common_denominator(v.clone()).unwrap();
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

    /// Two pool sizes (a mixed cluster): their least common multiple serves both.
    #[test]
    fn mixed_pools_take_the_least_common_multiple() {
        let v = [1.0 / 3.0, 2.0 / 7.0, 5.0 / 6.0];
        assert_eq!(common_denominator(v.into_iter()), Some(42));
        assert_eq!(lcm(4, 6), Some(12));
        assert_eq!(lcm(u64::MAX, 2), None);
    }

    /// What is not a small ratio is refused, so the caller keeps the float.
    #[test]
    fn other_values_have_no_denominator() {
        for v in [-0.0, -0.5, f64::NAN, f64::INFINITY, 0.1 + 0.2] {
            assert_eq!(common_denominator([0.5, v].into_iter()), None, "{v}");
        }
        // A small ratio over a large pool is kept: 1/30,000,000.
        assert_eq!(
            common_denominator([0.5, 1.0 / 3.0e7].into_iter()),
            Some(30_000_000)
        );
        assert_eq!(common_denominator([-0.0].into_iter()), None);
        assert_eq!(common_denominator([f64::NAN].into_iter()), None);
        assert_eq!(common_denominator([0.5, 1.5].into_iter()), Some(2));
        // A numerator past 16 bits: 70,000/70,001.
        assert_eq!(common_denominator([70_000.0 / 70_001.0].into_iter()), None);
        assert_eq!(common_denominator(std::iter::empty()), Some(1));
    }
}
