//! Field paths into a scenario's JSON tree (`workload.stages[0].request_rate`), the same
//! spelling validation uses, and setting the value at one.

use crate::tracked::Seg;
use serde_json::Value;

/// Splits `path` into steps, or says what is wrong with its spelling.
pub fn parse(path: &str) -> Result<Vec<Seg>, String> {
    let bad = || format!("\"{path}\" is not a field path like workload.stages[0].request_rate");
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => part.split_at(i),
            None => (part, ""),
        };
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        steps.push(Seg::Key(key.to_string()));
        while let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']').ok_or_else(bad)?;
            let i = inner[..close].parse::<usize>().map_err(|_| bad())?;
            steps.push(Seg::Index(i));
            rest = &inner[close + 1..];
        }
        if !rest.is_empty() {
            return Err(bad());
        }
    }
    Ok(steps)
}

/// Sets the value at `path` in `tree`; the last key may be new (the document's own checks
/// then say whether the field exists), everything before it must be there.
pub fn set(tree: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let steps = parse(path)?;
    let mut node = tree;
    let mut at = String::new();
    for (n, step) in steps.iter().enumerate() {
        let last = n + 1 == steps.len();
        node = match (step, node) {
            (Seg::Key(k), Value::Object(m)) => {
                if !last && !m.contains_key(k) {
                    return Err(format!("{} has no field \"{k}\"", name(&at)));
                }
                m.entry(k.clone()).or_insert(Value::Null)
            }
            (Seg::Index(i), Value::Array(a)) => {
                let len = a.len();
                a.get_mut(*i).ok_or_else(|| {
                    format!("{} has {len} entries, so [{i}] does not exist", name(&at))
                })?
            }
            (Seg::Key(_), _) => return Err(format!("{} is not an object", name(&at))),
            (Seg::Index(_), _) => return Err(format!("{} is not a list", name(&at))),
        };
        match step {
            Seg::Key(k) => at = crate::validate::join(&at, k),
            Seg::Index(i) => at = crate::validate::index(&at, *i),
        }
    }
    *node = value;
    Ok(())
}

fn name(at: &str) -> String {
    if at.is_empty() {
        "the document".into()
    } else {
        format!("\"{at}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sets_nested_fields_and_list_elements() {
        let mut t = json!({"workload": {"stages": [{"request_rate": 1}]}, "router": {}});
        set(&mut t, "workload.stages[0].request_rate", json!(5.5)).unwrap();
        set(&mut t, "router.policy", json!({"policy": "round_robin"})).unwrap();
        assert_eq!(t["workload"]["stages"][0]["request_rate"], json!(5.5));
        assert_eq!(t["router"]["policy"]["policy"], json!("round_robin"));
    }

    #[test]
    fn bad_paths_say_where_they_break() {
        let mut t = json!({"workload": {"stages": [{}]}});
        let err = |p: &str| set(&mut t.clone(), p, json!(1)).unwrap_err();
        assert_eq!(
            err("workload.stages[3].x"),
            "\"workload.stages\" has 1 entries, so [3] does not exist"
        );
        assert_eq!(err("workload.nope.x"), "\"workload\" has no field \"nope\"");
        assert!(err("workload..x").contains("is not a field path"));
        assert!(err("workload.stages[x]").contains("is not a field path"));
        assert_eq!(
            err("workload.stages.x"),
            "\"workload.stages\" is not an object"
        );
        set(&mut t, "workload.stages[0].total_requests", json!(3)).unwrap();
    }
}
