//! `opal presets` and `opal preset <id>`: the built-in scenarios.

use crate::args::UsageError;
use crate::failure::{print, write_file, Failure};
use opal::document::{presets, Preset};
use std::path::Path;

/// Lists every preset: id, title, and whether it is an Opal config or needs data files.
pub(crate) fn list() -> Result<(), Failure> {
    let all = presets();
    let width = all.iter().map(|p| p.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in &all {
        out.push_str(&format!("{:<width$}  {}", p.id, p.title));
        if p.is_opal() {
            out.push_str(" [Opal config]");
        }
        out.push('\n');
    }
    print(&out)
}

/// Prints preset `id`'s document, or writes it to `output` with its data files beside it.
pub(crate) fn show(id: &str, output: Option<&Path>) -> Result<(), Failure> {
    let Some(preset) = opal::document::preset(id) else {
        let ids: Vec<&str> = presets().iter().map(|p| p.id).collect();
        return Err(Failure::Usage(UsageError {
            message: format!("no preset \"{id}\" (there are: {})", ids.join(", ")),
            help: "Run `opal presets` for the list.\n",
        }));
    };
    match output {
        None => {
            if !preset.files.is_empty() {
                let names: Vec<&str> = preset.files.iter().map(|(n, _)| *n).collect();
                eprintln!(
                    "note: this preset also needs {}; `opal preset {id} -o FILE` writes them",
                    names.join(", ")
                );
            }
            print(preset.json)
        }
        Some(path) => write_with_data(&preset, path),
    }
}

/// Writes the document to `path` and each data file relative to its directory, refusing to
/// replace a data file that exists with other contents (it may be the user's own trace).
fn write_with_data(preset: &Preset, path: &Path) -> Result<(), Failure> {
    let dir = path.parent().unwrap_or(Path::new(""));
    for (name, text) in preset.files {
        let file = dir.join(name);
        match std::fs::read_to_string(&file) {
            Ok(existing) if existing == *text => continue,
            Ok(_) => {
                return Err(Failure::Io(format!(
                    "{} exists with other contents; not replacing it",
                    file.display()
                )))
            }
            Err(_) => {}
        }
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Failure::Io(format!("{}: {e}", parent.display())))?;
        }
        write_file(&file, text)?;
        eprintln!("wrote {}", file.display());
    }
    write_file(path, preset.json)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
