//! A map kept as a vector sorted by key: for the app's small maps (a handful of data files,
//! the runs in flight), whose `BTreeMap` code the wasm would compile once per key and value
//! type.

use std::borrow::Borrow;

/// Entries `(key, value)` in key order, one per key.
#[derive(Debug, Clone, PartialEq)]
pub struct SortedMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// The value at `key`.
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.0.get(i).map(|(_, v)| v)
    }

    /// The value at `key`, to change.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.0.get_mut(i).map(|(_, v)| v)
    }

    /// True when `key` has a value.
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Sets `key`'s value, replacing one it had.
    pub fn insert(&mut self, key: K, value: V) {
        match self.find(&key) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    /// Takes `key`'s value out, if it has one.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        Some(self.0.remove(i).1)
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_in_key_order_one_value_per_key() {
        let mut m: SortedMap<String, u32> = SortedMap::default();
        m.insert("b".into(), 1);
        m.insert("a".into(), 2);
        m.insert("b".into(), 3);
        let all: Vec<(&str, u32)> = m.iter().map(|(k, &v)| (k.as_str(), v)).collect();
        assert_eq!(all, [("a", 2), ("b", 3)]);
        assert_eq!(m.get("b"), Some(&3));
        *m.get_mut("a").unwrap() += 10;
        assert_eq!(m.get("a"), Some(&12));
        assert!(m.contains_key("a") && !m.contains_key("c"));
        assert_eq!(m.remove("a"), Some(12));
        assert_eq!(m.remove("c"), None);
        assert_eq!((m.len(), m.is_empty()), (1, false));
    }
}
