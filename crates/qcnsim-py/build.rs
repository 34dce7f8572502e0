//! Embed the reference scenarios (`scenarios/*.toml` at the workspace root) into the extension
//! module, so that an installed (non-editable) `qcnsim` can run `qcnsim reproduce NAME` from any
//! directory. Exposed to Python as `qcnsim._core.builtin_scenarios()`.
//!
//! Also records how it was built, for the provenance in run.json (`qcnsim._core.build_info()`):
//! the rustc version, the build profile and, when built from a git checkout, the commit and
//! whether tracked files differed from it at build time.

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
    build_facts(&manifest);
}

/// The output of a command, trimmed, or "" when it cannot run or fails.
fn output(cmd: &str, args: &[&str], dir: &PathBuf) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn build_facts(manifest: &PathBuf) {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    println!(
        "cargo:rustc-env=QCNSIM_RUSTC_VERSION={}",
        output(&rustc, &["--version"], manifest)
    );
    println!(
        "cargo:rustc-env=QCNSIM_PROFILE={}",
        env::var("PROFILE").unwrap_or_default()
    );
    let commit = output("git", &["rev-parse", "HEAD"], manifest);
    let dirty = !commit.is_empty()
        && !output(
            "git",
            &["status", "--porcelain", "--untracked-files=no"],
            manifest,
        )
        .is_empty();
    println!("cargo:rustc-env=QCNSIM_GIT_COMMIT={commit}");
    println!(
        "cargo:rustc-env=QCNSIM_GIT_DIRTY={}",
        if dirty { "1" } else { "0" }
    );
    // Rebuild the facts when HEAD moves or the index changes (a commit, a checkout, an add).
    for what in ["HEAD", "index", "logs/HEAD"] {
        let p = output("git", &["rev-parse", "--git-path", what], manifest);
        if !p.is_empty() {
            let p = PathBuf::from(p);
            let p = if p.is_absolute() { p } else { manifest.join(p) };
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
}
