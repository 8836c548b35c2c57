//! Embeds every run's request stream (`data/requests/*.csv`) so the suite runs anywhere.

use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new("data/requests");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("fidelity/data/requests exists")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".csv").map(str::to_string)
        })
        .collect();
    names.sort();
    let mut out = String::from("/// Every run's request stream, by run name.\npub(crate) const STREAMS: &[(&str, &str)] = &[\n");
    for n in &names {
        writeln!(
            out,
            "    ({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/data/requests/{n}.csv\"))),"
        )
        .unwrap();
    }
    out.push_str("];\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("streams.rs");
    std::fs::write(path, out).unwrap();
}
