//! Problems found while checking a scenario, each located by its field path.

use serde::Serialize;

/// One problem found in a scenario document, located by its field path.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Problem {
    /// Where the problem is, e.g. `workload.stages[1].request_rate` (empty for the whole document).
    pub path: String,
    /// What is wrong, in words a user can act on.
    pub message: String,
}

/// Longest field path a problem shows, in characters.
pub const MAX_PATH_CHARS: usize = 200;
/// Longest message a problem shows, in characters: a 10 MB model name must not become
/// 10 MB of stderr, or of the app's problem list.
pub const MAX_MESSAGE_CHARS: usize = 400;

impl Problem {
    /// A problem at `path`, both shortened to a readable length (see [`shorten`]).
    pub fn new(path: impl AsRef<str>, message: impl AsRef<str>) -> Self {
        Self {
            path: shorten(path.as_ref(), MAX_PATH_CHARS),
            message: shorten(message.as_ref(), MAX_MESSAGE_CHARS),
        }
    }
}

/// `text` if it has at most `max` characters; otherwise its beginning and end around a note
/// of how much was left out: `model.name: unknown model "xxxx…[10485600 characters]…xx"`.
pub fn shorten(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let (head, tail) = (max * 2 / 3, max / 6);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}…[{} characters]…{end}", count - head - tail)
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Collects every problem in a document, so validation reports them all at once.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Problems {
    list: Vec<Problem>,
}

impl Problems {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a problem at `path` (both shortened to a readable length).
    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.list.push(Problem::new(path.into(), message.into()));
    }

    /// Records a problem unless `value > 0` (NaN is a problem too).
    pub fn positive(&mut self, path: &str, field: &str, value: f64) {
        if !value.is_finite() || value <= 0.0 {
            self.push(join(path, field), "must be > 0");
        }
    }

    /// Records a problem unless `value >= 0` and finite.
    pub fn non_negative(&mut self, path: &str, field: &str, value: f64) {
        if !value.is_finite() || value < 0.0 {
            self.push(join(path, field), "must be >= 0");
        }
    }

    /// Records a problem unless `lo <= value <= hi`.
    pub fn in_range(&mut self, path: &str, field: &str, value: f64, lo: f64, hi: f64) {
        if value.is_nan() || !(lo..=hi).contains(&value) {
            self.push(join(path, field), format!("must be between {lo} and {hi}"));
        }
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The problems, in the order they were found.
    pub fn into_vec(self) -> Vec<Problem> {
        self.list
    }

    /// The problems found so far.
    pub fn as_slice(&self) -> &[Problem] {
        &self.list
    }
}

/// Joins a parent path and a field name: `join("worker", "max_num_seqs")` is `worker.max_num_seqs`.
pub fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// The path of an element of a list: `index("workload.stages", 1)` is `workload.stages[1]`.
pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A count as the limits are written, exact: "2,500", "10,000,000"; past a million billion,
/// and ∞ (a rate of 1e308 times a duration overflows), as [`readable`] writes it.
pub fn count(n: f64) -> String {
    if !(n.is_finite() && n < 1e15) {
        return readable(n);
    }
    let digits = format!("{:.0}", n.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// `x` as a message shows a number someone typed: as written between a thousandth and a
/// million billion ("0.9", "4096"), else in exponent form with three significant figures
/// ("1e-320", "3.16e292") rather than hundreds of digits.
pub fn readable(x: f64) -> String {
    let a = x.abs();
    if x.is_nan() {
        "NaN".into()
    } else if a.is_infinite() {
        if x > 0.0 { "∞" } else { "-∞" }.into()
    } else if a == 0.0 || (1e-3..1e15).contains(&a) {
        format!("{x}")
    } else {
        exponent_form(x)
    }
}

/// `x` in exponent form with three significant figures: "1e-320", "3.16e292".
pub fn exponent_form(x: f64) -> String {
    let s = format!("{x:.2e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{mantissa}e{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_are_as_typed_or_short_exponents() {
        assert_eq!(readable(0.9), "0.9");
        assert_eq!(readable(4096.0), "4096");
        assert_eq!(readable(0.0), "0");
        assert_eq!(readable(1e-320), "1e-320");
        assert_eq!(readable(3.155_76e292), "3.16e292");
        assert_eq!(readable(-2.5e-7), "-2.5e-7");
        assert_eq!(readable(f64::INFINITY), "∞");
    }

    #[test]
    fn collects_every_problem_with_its_path() {
        let mut p = Problems::new();
        p.positive("workload.stages[1]", "request_rate", 0.0);
        p.positive("worker", "max_num_seqs", f64::NAN);
        p.non_negative("router", "scale_latency", 1.0);
        let v = p.into_vec();
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0].to_string(),
            "workload.stages[1].request_rate: must be > 0"
        );
        assert_eq!(v[1].path, "worker.max_num_seqs");
    }

    #[test]
    fn oversized_text_is_cut_in_the_middle_saying_how_much() {
        assert_eq!(shorten("short", 10), "short");
        // 12 characters at most 6: the first 4, the last 1, and 7 left out.
        assert_eq!(shorten("abcdefghijkl", 6), "abcd…[7 characters]…l");
        let huge = format!("unknown model \"{}\"", "x".repeat(10 << 20));
        let p = Problem::new("model.name", huge);
        assert!(p.message.len() < 1000, "{}", p.message.len());
        // 15 + 10·2²⁰ + 1 = 10,485,776 characters; kept: 400·2/3 = 266 and 400/6 = 66.
        assert!(p.message.contains("[10485444 characters]"), "{}", p.message);
    }

    #[test]
    fn paths_compose() {
        assert_eq!(
            join(&index("workload.stages", 2), "rate"),
            "workload.stages[2].rate"
        );
        assert_eq!(join("", "seed"), "seed");
    }
}
