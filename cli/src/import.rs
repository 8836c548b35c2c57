//! `opal import-opal`: an original Opal config as a scenario document.

use crate::failure::{print, write_file, Failure};
use crate::load::read_text;
use opal::document::{import_opal, reproduce_original};
use std::path::Path;

/// Converts `input`; the scenario goes to `output` (report on stdout) or to stdout (report
/// on stderr, so the scenario can be piped). With `compat`, every `opal_compat` switch is on.
pub(crate) fn import(input: &Path, output: Option<&Path>, compat: bool) -> Result<(), Failure> {
    let text = read_text(input)?;
    let (mut scenario, mut report) = import_opal(&text).map_err(Failure::Invalid)?;
    if compat {
        reproduce_original(&mut scenario, &mut report);
    }
    let json = opal::document::to_json_pretty(&scenario) + "\n";
    match output {
        Some(path) => {
            write_file(path, &json)?;
            print(&format!("{report}wrote {}\n", path.display()))
        }
        None => {
            eprint!("{report}");
            print(&json)
        }
    }
}
