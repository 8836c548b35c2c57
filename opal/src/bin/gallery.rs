//! Writes the preset gallery's pictures (`opal/src/gallery/pictures.rs`) by running every
//! preset, or with `--check` fails when the file no longer matches what the presets give.
//!
//! `cargo run --release -p opal --bin gallery [-- --check]`

use std::process::ExitCode;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/gallery/pictures.rs");

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("gallery: unknown argument {other:?} (usage: gallery [--check])");
            return ExitCode::from(2);
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut pictures = Vec::new();
    for preset in opal::document::presets() {
        match opal::gallery::make(&preset, threads) {
            Ok(p) => pictures.push(p),
            Err(e) => {
                eprintln!("gallery: preset {}: {e}", preset.id);
                return ExitCode::FAILURE;
            }
        }
    }
    let text = opal::gallery::source(&pictures);
    if check {
        if std::fs::read_to_string(FILE).ok().as_deref() == Some(text.as_str()) {
            println!("gallery: the {} pictures are current", pictures.len());
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "gallery: {FILE} no longer matches the presets' runs; \
             write it anew with `cargo run --release -p opal --bin gallery`"
        );
        return ExitCode::FAILURE;
    }
    match std::fs::write(FILE, text) {
        Ok(()) => {
            println!("gallery: wrote {} pictures to {FILE}", pictures.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gallery: cannot write {FILE}: {e}");
            ExitCode::FAILURE
        }
    }
}
