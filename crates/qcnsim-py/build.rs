//! Embed the reference scenarios (`scenarios/*.toml` at the workspace root) into the extension
//! module, so that an installed (non-editable) `qcnsim` can run `qcnsim reproduce NAME` from any
//! directory. Exposed to Python as `qcnsim._core.builtin_scenarios()`.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let dir = manifest.join("..").join("..").join("scenarios");
    // A directory here makes cargo rescan it for added, removed or modified files.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(rd) = fs::read_dir(&dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().and_then(|x| x.to_str()) == Some("toml") && p.is_file() {
                if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
                    let abs = fs::canonicalize(&p).unwrap_or(p.clone());
                    entries.push((stem.to_string(), abs));
                }
            }
        }
    }
    entries.sort();
    let mut code = String::from("pub static SCENARIOS: &[(&str, &str)] = &[\n");
    for (name, path) in &entries {
        code.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            name,
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("scenarios.rs");
    fs::write(out, code).expect("write scenarios.rs");
}
