//! Reading a scenario document: JSON to a [`Scenario`], with every mistake reported at once.
//!
//! serde stops at the first type error, and inside an internally tagged object (a stage, a
//! length distribution, a routing policy) it names the object rather than the field. So the
//! document is first read into a JSON tree (noting duplicate keys, which JSON parsers
//! otherwise resolve silently by keeping the last), then deserialized again and again: each
//! failure is pinned to its field and that field is taken out of the tree, until the tree
//! reads or [`MAX_PROBLEMS`] mistakes are listed.
//!
//! An error at an object (not a leaf) is pinned by probing: serde reports a struct's
//! fields' type errors in key order and only then its missing fields, so the first key
//! whose removal makes the error go away is the field at fault. The tag (`type`, `policy`)
//! is tried last, since without it nothing inside is read at all.

use engine::scenario::Scenario;
use engine::tracked::{self, Seg};
use engine::validate::{index, join, Problem};
use engine::workload::StageConfig;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

/// Most problems listed for one document; past this the list ends with a note.
pub(super) const MAX_PROBLEMS: usize = 50;

/// Keys that select the shape of the object holding them.
const TAGS: [&str; 2] = ["type", "policy"];

/// Parses `text` into a scenario, or lists every duplicate key and type error.
pub(super) fn read(text: &str) -> Result<Scenario, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut tree = read_tree(text, &mut problems)?;
    if !tree.is_object() {
        return Err(vec![Problem::new("", "a scenario must be a JSON object")]);
    }
    super::upgrade::upgrade(&mut tree, &mut problems);
    loop {
        let (at, message) = match deserialize::<Scenario>(&tree, &[]) {
            Ok(scenario) if problems.is_empty() => return Ok(scenario),
            Ok(_) => return Err(problems),
            Err(e) => e,
        };
        if problems.len() >= MAX_PROBLEMS {
            problems.push(Problem::new(
                "",
                format!("more problems follow; fix these {MAX_PROBLEMS} first"),
            ));
            return Err(problems);
        }
        let at = match pin(&mut tree, &at, &message) {
            Some(field) => field,
            None => at,
        };
        // An echo of a field already reported and taken out: take out the object missing
        // it instead (its default applies), without a second report.
        let at = match echo_of(&problems, &at, &message) {
            Some(object) => object,
            None => {
                problems.push(Problem::new(path_string(&at), &message));
                at
            }
        };
        // Take the faulty part out, so the next pass finds the next mistake (the tree only
        // shrinks, so this ends); a part that cannot be taken out ends the search.
        if !remove(&mut tree, &at) {
            return Err(problems);
        }
    }
}

fn path_string(path: &[Seg]) -> String {
    path.iter().fold(String::new(), |p, s| match s {
        Seg::Key(k) => join(&p, k),
        Seg::Index(i) => index(&p, *i),
    })
}

/// Deserializes the part of the tree at `scope` as a `T`; on failure, where (from the root)
/// and what.
fn deserialize<T: serde::de::DeserializeOwned>(
    tree: &Value,
    scope: &[Seg],
) -> Result<T, (Vec<Seg>, String)> {
    let part = scope.iter().try_fold(tree, |node, seg| match (seg, node) {
        (Seg::Key(k), Value::Object(m)) => m.get(k),
        (Seg::Index(i), Value::Array(a)) => a.get(*i),
        _ => None,
    });
    let Some(part) = part else {
        return Err((scope.to_vec(), "not found".into()));
    };
    tracked::deserialize(part).map_err(|(at, e)| {
        let mut path = scope.to_vec();
        path.extend(at);
        (path, e.to_string())
    })
}

fn node_mut<'a>(tree: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    path.iter().try_fold(tree, |node, seg| match (seg, node) {
        (Seg::Key(k), Value::Object(m)) => m.get_mut(k),
        (Seg::Index(i), Value::Array(a)) => a.get_mut(*i),
        _ => None,
    })
}

/// The first error in the part of the tree holding `at`: a stage on its own when `at` lies
/// in one (so probing a stage of a 30,000-stage document reads one stage), else the whole.
fn first_error(tree: &Value, at: &[Seg]) -> Option<(Vec<Seg>, String)> {
    match at {
        [Seg::Key(w), Seg::Key(s), Seg::Index(_), ..] if w == "workload" && s == "stages" => {
            deserialize::<StageConfig>(tree, &at[..3]).err()
        }
        _ => deserialize::<Scenario>(tree, &[]).err(),
    }
}

/// For an error `message` at an object, the field of it at fault (see the module docs),
/// followed down as long as the field is an object itself.
fn pin(tree: &mut Value, at: &[Seg], message: &str) -> Option<Vec<Seg>> {
    let error = Some((at.to_vec(), message.to_string()));
    let mut node = at.to_vec();
    while let Some(Value::Object(object)) = node_mut(tree, &node) {
        // Map order, tags last (a partition rather than a sort: one sort less in the wasm).
        let (tags, mut keys): (Vec<String>, Vec<String>) = object
            .keys()
            .cloned()
            .partition(|k| TAGS.contains(&k.as_str()));
        keys.extend(tags);
        let mut culprit = None;
        for key in keys {
            let Some(Value::Object(object)) = node_mut(tree, &node) else {
                break;
            };
            let Some(value) = object.remove(&key) else {
                break;
            };
            let same = first_error(tree, at) == error;
            if let Some(Value::Object(object)) = node_mut(tree, &node) {
                object.insert(key.clone(), value);
            }
            if !same {
                culprit = Some(key);
                break;
            }
        }
        match culprit {
            Some(key) => node.push(Seg::Key(key)),
            None => break,
        }
    }
    (node.len() > at.len()).then_some(node)
}

/// Takes the node at `path` out of the tree: a key from its object (the default applies), or
/// an element of a list, which cannot be dropped without renumbering the rest, replaced by a
/// stand-in that reads (a stage, a tier) or else the whole list. False when there is
/// nothing to take.
fn remove(tree: &mut Value, path: &[Seg]) -> bool {
    let Some(last_key) = path.iter().rposition(|s| matches!(s, Seg::Key(_))) else {
        return false;
    };
    let Seg::Key(key) = &path[last_key] else {
        unreachable!()
    };
    if let (Some(Seg::Index(_)), Some(stand_in)) = (path.get(last_key + 1), stand_in(key)) {
        if let Some(node) = node_mut(tree, &path[..last_key + 2]) {
            let changed = *node != stand_in;
            *node = stand_in;
            return changed;
        }
    }
    match node_mut(tree, &path[..last_key]) {
        Some(Value::Object(m)) => m.remove(key).is_some(),
        _ => false,
    }
}

/// An element that reads without problems, for the lists whose elements have one.
fn stand_in(list: &str) -> Option<Value> {
    match list {
        "stages" => Some(serde_json::json!({"type": "UniformReqRate", "total_requests": 1})),
        "tiers" => Some(serde_json::json!({})),
        _ => None,
    }
}

/// Whether an error is only the echo of one already listed: the field `k` of an object (at
/// `at` or above it) was reported and taken out, and now the object misses it. Then the
/// object's path.
fn echo_of(problems: &[Problem], at: &[Seg], message: &str) -> Option<Vec<Seg>> {
    let key = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))?;
    (0..=at.len()).rev().find_map(|n| {
        let path = join(&path_string(&at[..n]), key);
        problems
            .iter()
            .any(|p| p.path == path)
            .then(|| at[..n].to_vec())
    })
}

/// Reads `text` into a JSON tree, noting every duplicate key in `problems`.
fn read_tree(text: &str, problems: &mut Vec<Problem>) -> Result<Value, Vec<Problem>> {
    let reader = TreeReader {
        path: RefCell::new(Vec::new()),
        duplicates: RefCell::new(Vec::new()),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let tree = (&reader)
        .deserialize(&mut de)
        .and_then(|tree| de.end().map(|()| tree))
        .map_err(|e| vec![Problem::new("", format!("not valid JSON: {e}"))])?;
    problems.extend(reader.duplicates.into_inner());
    Ok(tree)
}

/// Builds a [`Value`] like serde_json's own, remembering where it is to name duplicates.
struct TreeReader {
    path: RefCell<Vec<Seg>>,
    duplicates: RefCell<Vec<Problem>>,
}

impl<'de> DeserializeSeed<'de> for &TreeReader {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &TreeReader {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            self.path.borrow_mut().push(Seg::Index(out.len()));
            let next = seq.next_element_seed(self);
            self.path.borrow_mut().pop();
            match next? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.borrow_mut().push(Seg::Key(key.clone()));
            let value = map.next_value_seed(self);
            if value.is_ok() && out.contains_key(&key) {
                let path = path_string(&self.path.borrow());
                self.duplicates.borrow_mut().push(Problem::new(
                    path,
                    format!("\"{key}\" is given twice; only one value can count, remove the other"),
                ));
            }
            self.path.borrow_mut().pop();
            out.insert(key, value?);
        }
        Ok(Value::Object(out))
    }
}
