//! The built-in models are the Hugging Face configs of the models the real runs and the
//! kernel profiles used (fidelity/data/models, copied from the shared measurements).

use engine::model::{catalogue, hf};

#[test]
fn every_catalogue_model_matches_its_hugging_face_config() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/models");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let imported = hf::from_config_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let built_in =
            catalogue::lookup(&name).unwrap_or_else(|| panic!("{name} is not in the catalogue"));
        assert_eq!(built_in, imported, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 13);
}
