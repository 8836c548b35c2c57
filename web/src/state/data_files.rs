//! The data files picked in the tab, by name.

use std::rc::Rc;

/// Data files (name, text) in name order: a sorted list rather than a BTreeMap, whose code
/// the wasm compiles once per key and value type (a handful of files at most).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataFiles(Vec<(String, Rc<str>)>);

impl DataFiles {
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(n, _)| n.as_str().cmp(name))
    }

    /// The text of the file called `name`.
    pub fn get(&self, name: &str) -> Option<&Rc<str>> {
        let i = self.find(name).ok()?;
        self.0.get(i).map(|(_, t)| t)
    }

    /// True when a file called `name` is loaded.
    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Adds the file, replacing one of the same name.
    pub fn insert(&mut self, name: String, text: Rc<str>) {
        match self.find(&name) {
            Ok(i) => {
                if let Some(slot) = self.0.get_mut(i) {
                    slot.1 = text;
                }
            }
            Err(i) => self.0.insert(i, (name, text)),
        }
    }

    /// Forgets the file called `name`, if loaded.
    pub fn remove(&mut self, name: &str) {
        if let Ok(i) = self.find(name) {
            self.0.remove(i);
        }
    }

    /// The files in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Rc<str>)> {
        self.0.iter().map(|(n, t)| (n, t))
    }

    /// How many files are loaded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no file is loaded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_in_name_order_one_per_name() {
        let mut f = DataFiles::default();
        f.insert("b".into(), Rc::from("1"));
        f.insert("a".into(), Rc::from("2"));
        f.insert("b".into(), Rc::from("3"));
        let all: Vec<(&str, &str)> = f.iter().map(|(n, t)| (n.as_str(), &**t)).collect();
        assert_eq!(all, [("a", "2"), ("b", "3")]);
        assert_eq!(f.get("b").map(|t| &**t), Some("3"));
        assert!(f.contains_key("a") && !f.contains_key("c"));
        f.remove("a");
        f.remove("c");
        assert_eq!(f.len(), 1);
    }
}
