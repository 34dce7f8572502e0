//! The core's modules import downward only (crate docs, src/lib.rs): every `crate::<module>` path
//! in a module's source names a module of a lower layer, or the module itself. Comments are not
//! code (a doc link may point anywhere). A test of the check itself makes sure it can fail.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first; a module may use the modules of the layers below its own.
const LAYERS: &[&[&str]] = &[
    &["units", "table"],
    &["engine", "net"],
    &["proto"],
    &["scenario"],
    &["summary"],
    &["sim", "fluid"],
    &["api"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The source without comments (line comments, doc comments and block comments).
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let (mut i, mut depth, mut in_str) = (0, 0usize, false);
    while i < b.len() {
        if depth == 0 && !in_str && b[i] == b'"' {
            in_str = true;
        } else if in_str {
            if b[i] == b'\\' {
                out.push(b[i] as char);
                i += 1;
            } else if b[i] == b'"' {
                in_str = false;
            }
        } else if depth == 0 && b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
            continue;
        } else if depth > 0 && b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            continue;
        }
        if depth == 0 && i < b.len() {
            out.push(b[i] as char);
        }
        i += 1;
    }
    out
}

/// The modules a source names as `crate::<module>` (also inside `use crate::{a, b}` groups).
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(k) = rest.find("crate::") {
        rest = &rest[k + "crate::".len()..];
        let grouped = rest.starts_with('{');
        let body = if grouped {
            &rest[1..rest.find('}').unwrap_or(rest.len())]
        } else {
            rest
        };
        for part in if grouped {
            body.split(',').collect::<Vec<_>>()
        } else {
            vec![body]
        } {
            let name: String = part
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every import that points up or sideways: (file, its module, the module it names).
fn violations(src: &Path) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "bin" {
            continue;
        }
        let own = layer_of(&module)
            .unwrap_or_else(|| panic!("module `{module}` is in no layer: add it to LAYERS"));
        let code = strip_comments(&fs::read_to_string(&f).unwrap());
        for used in crate_refs(&code) {
            let ok = used == module || layer_of(&used).is_some_and(|l| l < own);
            if !ok {
                bad.push((rel.display().to_string(), module.clone(), used));
            }
        }
    }
    bad
}

#[test]
fn core_modules_import_downward_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "imports against the layering (file, module, what it names):\n{bad:#?}"
    );
}

#[test]
fn every_module_is_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = strip_comments(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mods: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert!(mods.len() >= 9, "{mods:?}");
    for m in mods {
        assert!(layer_of(m).is_some(), "`{m}` is in no layer");
    }
}

#[test]
fn the_check_finds_an_import_that_points_up() {
    let dir = std::env::temp_dir().join(format!("qcnsim-layering-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("scenario")).unwrap();
    fs::write(
        dir.join("scenario/mod.rs"),
        "//! see [`crate::api`]\nuse crate::units;\nuse crate::{table::Table, sim::Sim};\n\
         fn f() -> crate::api::X { /* crate::fluid */ }\nconst S: &str = \"// not a comment\";\n",
    )
    .unwrap();
    fs::write(dir.join("units.rs"), "use crate::units::SEC;\n").unwrap();
    let bad = violations(&dir);
    let _ = fs::remove_dir_all(&dir);
    let names: Vec<&str> = bad.iter().map(|b| b.2.as_str()).collect();
    assert_eq!(names, ["api", "sim"], "{bad:?}");
}

/// The rooms of the simulator (src/sim, docs/code-layout.md): each subsystem, its files and the
/// names it owns (types and module paths). A subsystem names no other subsystem, and neither
/// does the data path (sim/core: it calls the wiring's hooks); only the simulator's top files
/// (mod.rs, build.rs, wiring.rs, fastpath.rs) and the output assembly (sim/record) know them
/// all. The data path's steps are the simulator's methods (they call the hooks); a subsystem's
/// act on `&mut Core`. `Reaction` (a flow's reaction point, the rate limiter's controller) is congestion
/// management's type that the data path's flows hold.
const SUBSYSTEMS: &[(&str, &[&str], &[&str])] = &[
    (
        "congestion management",
        &["cc/"],
        &[
            "Cm",
            "CpState",
            "Ctrl",
            "NicFbState",
            "DcqcnState",
            "E2eState",
            "Transient",
            "cc::",
            "qcn::",
            "bcn::",
            "nicfb::",
            "dcqcn::",
            "e2e::",
            "transient::",
        ],
    ),
    (
        "flow control",
        &["switch/flow_control.rs", "switch/deadlock.rs"],
        &["Fc", "Guard", "Next", "flow_control::", "deadlock::"],
    ),
    (
        "shared buffer",
        &["switch/buffer.rs"],
        &["Buffers", "PfcAsk", "buffer::"],
    ),
    (
        "multicast",
        &["switch/multicast.rs"],
        &["Multicast", "McFlow", "multicast::"],
    ),
    (
        "transport",
        &["host/transport.rs"],
        &["GbnState", "Withdrawn", "transport::"],
    ),
    (
        "link failures",
        &["topology/links.rs"],
        &["LinkState", "PortChange", "links::"],
    ),
];

/// Whether `code` uses the name `name` (a whole identifier, or a path prefix ending in `::`).
fn names(code: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(k) = code[from..].find(name) {
        let at = from + k;
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        // a module path counts where it starts a path (`proto::multicast::` is another module)
        let starts = !before.is_some_and(|c| ident(c) || (c == ':' && name.ends_with("::")));
        let ends = name.ends_with("::") || !after.is_some_and(ident);
        if starts && ends {
            return true;
        }
        from = at + name.len();
    }
    false
}

/// (file, what it names that it must not)
fn room_violations(sim: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rs_files(sim, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(sim)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let code = strip_comments(&fs::read_to_string(&f).unwrap());
        let own = SUBSYSTEMS
            .iter()
            .position(|(_, paths, _)| paths.iter().any(|p| rel.starts_with(p)));
        let in_core = rel.starts_with("core/");
        if own.is_none() && !in_core {
            // the top files and the output assembly know every subsystem
            continue;
        }
        if own.is_some() && names(&code, "Sim") {
            bad.push((
                rel.clone(),
                "Sim (a subsystem acts on &mut Core)".to_string(),
            ));
        }
        for (k, (sub, _, owned)) in SUBSYSTEMS.iter().enumerate() {
            if Some(k) == own {
                continue;
            }
            for n in owned.iter() {
                if names(&code, n) {
                    bad.push((rel.clone(), format!("{n} ({sub})")));
                }
            }
        }
    }
    bad
}

#[test]
fn subsystems_and_the_data_path_name_no_subsystem() {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let bad = room_violations(&sim);
    assert!(bad.is_empty(), "names across rooms (file, name):\n{bad:#?}");
    // every subsystem's files exist
    for (sub, paths, _) in SUBSYSTEMS {
        for p in paths.iter() {
            assert!(sim.join(p).exists(), "{sub}: {p} missing");
        }
    }
}

#[test]
fn the_room_check_finds_a_subsystem_that_calls_another() {
    let dir = std::env::temp_dir().join(format!("qcnsim-rooms-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for d in ["cc", "switch", "host", "topology", "core"] {
        fs::create_dir_all(dir.join(d)).unwrap();
    }
    // congestion management asking flow control to pause, through the simulator
    fs::write(
        dir.join("cc/mod.rs"),
        "// Fc in a comment is fine\nimpl Cm { fn f(&mut self, fc: &mut Fc) {} }\nimpl Sim {}\n",
    )
    .unwrap();
    // the data path calling the transport directly; `PortChanges` is not `PortChange`
    fs::write(
        dir.join("core/datapath.rs"),
        "fn g(s: &mut X) { s.gbn.made(); transport::GbnState::restart(); let _ = PortChanges; }\n",
    )
    .unwrap();
    fs::write(dir.join("topology/links.rs"), "struct LinkState;\n").unwrap();
    let bad = room_violations(&dir);
    let _ = fs::remove_dir_all(&dir);
    let got: Vec<String> = bad.iter().map(|(f, n)| format!("{f}: {n}")).collect();
    assert_eq!(
        got,
        [
            "cc/mod.rs: Sim (a subsystem acts on &mut Core)",
            "cc/mod.rs: Fc (flow control)",
            "core/datapath.rs: GbnState (transport)",
            "core/datapath.rs: transport:: (transport)",
        ],
        "{bad:?}"
    );
}
