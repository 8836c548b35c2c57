fn main() {
    let patch: serde_json::Value =
        serde_json::from_str(&std::env::args().nth(1).unwrap_or("{}".into())).unwrap();
    let only = std::env::args().nth(2).unwrap_or_default();
    let runs: Vec<_> = fidelity::builtin_runs()
        .into_iter()
        .filter(|r| r.name.contains(&only) && (only.is_empty() == false || r.is_scored()))
        .collect();
    print!(
        "{}",
        fidelity::render(&fidelity::compare_all(&runs, &patch))
    );
}
