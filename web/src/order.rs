//! Sorting by a number, with one sort compiled for the whole app: each `sort_by` on a type
//! of its own is a copy of the standard library's stable sort in the wasm, while this sorts
//! positions, the same type every time.

/// The positions of `keys` in ascending order (by [`f64::total_cmp`]), equal keys in their
/// original order.
#[inline(never)]
pub fn ascending(keys: &[f64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        keys[a as usize]
            .total_cmp(&keys[b as usize])
            .then(a.cmp(&b))
    });
    order
}

/// Sorts `v` by `key`, ascending and stable, as `v.sort_by(|a, b| key(a).total_cmp(&key(b)))`.
pub fn sort_by_number<T>(v: &mut Vec<T>, key: impl Fn(&T) -> f64) {
    let keys: Vec<f64> = v.iter().map(key).collect();
    let order = ascending(&keys);
    let mut slots: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.iter().filter_map(|&i| slots[i as usize].take()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_ascending_and_keeps_ties_in_their_order() {
        let mut v = vec![
            (3.0, 'a'),
            (1.0, 'b'),
            (3.0, 'c'),
            (f64::NAN, 'd'),
            (-0.0, 'e'),
            (0.0, 'f'),
            (1.0, 'g'),
        ];
        let mut expected = v.clone();
        expected.sort_by(|a, b| a.0.total_cmp(&b.0));
        sort_by_number(&mut v, |p| p.0);
        let tags = |v: &[(f64, char)]| v.iter().map(|p| p.1).collect::<String>();
        assert_eq!(tags(&v), tags(&expected));
        assert_eq!(tags(&v), "efbgacd");
    }

    #[test]
    fn empty_and_single() {
        let mut v: Vec<f64> = Vec::new();
        sort_by_number(&mut v, |&x| x);
        assert!(v.is_empty());
        let mut v = vec![2.0];
        sort_by_number(&mut v, |&x| x);
        assert_eq!(v, [2.0]);
    }
}
