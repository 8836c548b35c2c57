//! Least-significant-digit radix sort by a `u64` key, for the large sorts of a run's
//! statistics (latencies at the end of a run, inter-token gaps as they are pooled): a few
//! passes over the values rather than a comparison sort's log₂ n, several times as fast on
//! a million values.

/// Bits per digit: a digit's counts (2048 of them) stay in the L1 cache.
const DIGIT_BITS: u32 = 11;

/// The passes sort on the top `WINDOW_BITS` significant bits of a key's offset from the
/// smallest key (two passes); values whose keys share them (few: latencies and gaps span
/// a few binary exponents, so for an f64 values within about a millionth of each other)
/// are then put in order by a comparison sort of their group.
const DIGITS: usize = 2;
const WINDOW_BITS: u32 = DIGIT_BITS * DIGITS as u32;

/// Below this many values a comparison sort is cheaper than the counting passes.
const MIN_RADIX: usize = 256;

/// The order key of an f64 under [`f64::total_cmp`]: unsigned order of keys is the total
/// order of values, and equal keys are the same bits.
pub(crate) fn total_order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Sorts `v` ascending by [`f64::total_cmp`]. Values equal under it are the same bits, so
/// the result is what any sort by that order gives.
pub fn sort_total(v: &mut [f64]) {
    if v.len() < MIN_RADIX {
        v.sort_unstable_by(f64::total_cmp);
        return;
    }
    sort_by_key(v, |&x| total_order_key(x));
}

/// Sorts `v` by `key`, stably: by the top bits of the key's offset from the smallest key,
/// least significant digit first, skipping the digits every key shares, then each group of
/// equal top bits by the whole key. Needs one scratch copy of `v`.
pub(crate) fn sort_by_key<T: Copy + Default>(v: &mut [T], key: impl Fn(&T) -> u64) {
    if v.len() < MIN_RADIX {
        v.sort_by_key(key);
        return;
    }
    let mut other = vec![T::default(); v.len()];
    sort_by_key_in(v, &mut other, key);
}

/// [`sort_by_key`] with the caller's scratch (at least as long as `v`; its contents are
/// overwritten).
pub(crate) fn sort_by_key_in<T: Copy>(v: &mut [T], scratch: &mut [T], key: impl Fn(&T) -> u64) {
    if v.len() < MIN_RADIX {
        v.sort_by_key(key);
        return;
    }
    let (min, max) = v.iter().fold((u64::MAX, 0), |(lo, hi), e| {
        let k = key(e);
        (lo.min(k), hi.max(k))
    });
    // The window: the range's top WINDOW_BITS bits (all of it when it is narrower).
    let shift = (u64::BITS - (max - min).leading_zeros()).saturating_sub(WINDOW_BITS);
    let top = |e: &T| (key(e) - min) >> shift;
    let radix = 1 << DIGIT_BITS;
    let digit = |t: u64, d: usize| (t >> (DIGIT_BITS as usize * d)) as usize & (radix - 1);
    let mut counts = vec![0u32; DIGITS * radix];
    for e in v.iter() {
        let t = top(e);
        for d in 0..DIGITS {
            counts[d * radix + digit(t, d)] += 1;
        }
    }
    let n = v.len();
    let other = &mut scratch[..n];
    let mut in_other = false;
    for (d, c) in counts.chunks_exact_mut(radix).enumerate() {
        if c.iter().any(|&x| x as usize == n) {
            continue;
        }
        // The counts become each digit's first position.
        let mut sum = 0;
        for x in c.iter_mut() {
            let here = *x;
            *x = sum;
            sum += here;
        }
        let (src, dst) = if in_other {
            (&*other, &mut *v)
        } else {
            (&*v, &mut *other)
        };
        for e in src.iter() {
            let at = &mut c[digit(top(e), d)];
            dst[*at as usize] = *e;
            *at += 1;
        }
        in_other = !in_other;
    }
    if in_other {
        v.copy_from_slice(other);
    }
    if shift == 0 {
        // The window held whole keys: equal tops are equal keys, already in order.
        return;
    }
    let mut start = 0;
    while start < n {
        let t = top(&v[start]);
        let end = start + 1 + v[start + 1..].iter().take_while(|e| top(e) == t).count();
        if end - start > 1 {
            v[start..end].sort_by_key(&key);
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of pseudo-random u64s.
    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x
    }

    #[test]
    fn sorts_pairs_by_key_stably_as_a_stable_comparison_sort() {
        let mut x: u64 = 99;
        // Few distinct keys, so stability shows in the second field: all in the bottom
        // half, and spread over both halves with few distinct top halves (groups).
        // And the whole u64 range, where the window is the keys' top bits.
        let shapes: [fn(u64) -> u64; 3] = [
            |r| ((r >> 11) % 1000) * 1_000_003,
            |r| (r >> 61) << 40 | ((r >> 11) % 1000) << 20 | ((r >> 30) % 3),
            |r| r ^ (r >> 33) << 20,
        ];
        for shape in shapes {
            for n in [0, 5, 255, 256, 5000] {
                let mut v: Vec<(u64, u64)> = (0..n).map(|i| (shape(lcg(&mut x)), i)).collect();
                let mut want = v.clone();
                want.sort_by_key(|e| e.0);
                sort_by_key(&mut v, |e| e.0);
                assert_eq!(v, want, "n = {n}");
            }
        }
    }

    #[test]
    fn sorts_floats_as_total_cmp_does() {
        // Signed zeros, infinities, subnormals, negatives and many repeats, in both the
        // comparison-sort and the radix range.
        let special = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            5e-324,
            -5e-324,
            1.0,
            -1.0,
        ];
        let mut x: u64 = 7;
        for n in [10, 300, 20_000] {
            let mut v: Vec<f64> = (0..n)
                .map(|i| {
                    let r = lcg(&mut x);
                    if i % 7 == 0 {
                        special[(r >> 60) as usize % special.len()]
                    } else {
                        ((r >> 11) % 5000) as f64 * 1e-4 - 0.1
                    }
                })
                .collect();
            let mut want = v.clone();
            want.sort_by(f64::total_cmp);
            sort_total(&mut v);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v), bits(&want), "n = {n}");
        }
    }
}
