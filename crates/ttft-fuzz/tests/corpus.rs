//! Every seed (`corpus/<target>/`) and every input that once crashed a target
//! (`regressions/<target>/`, named after the bug) goes through its target without a panic: the
//! fuzzer's findings stay fixed under a plain `cargo test`.

use std::path::{Path, PathBuf};

use ttft_fuzz::TARGETS;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of `dir` (none when it does not exist), sorted by name.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// The folders under `dir` that name no target.
fn stray_folders(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| !TARGETS.iter().any(|(t, _)| t == name))
        .collect()
}

#[test]
fn every_target_has_seeds_and_every_folder_names_a_target() {
    for (name, _) in TARGETS {
        assert!(
            !files(&crate_dir().join("corpus").join(name)).is_empty(),
            "no seeds for `{name}`: run `cargo run -p ttft-fuzz --example seeds`"
        );
    }
    for dir in ["corpus", "regressions"] {
        assert_eq!(
            stray_folders(&crate_dir().join(dir)),
            Vec::<String>::new(),
            "{dir}/"
        );
    }
}

#[test]
fn seeds_and_past_crashes_pass_through_their_targets() {
    let mut ran = 0;
    for (name, target) in TARGETS {
        for dir in ["corpus", "regressions"] {
            for path in files(&crate_dir().join(dir).join(name)) {
                let bytes = std::fs::read(&path).expect("readable");
                let outcome = std::panic::catch_unwind(|| target(&bytes));
                assert!(outcome.is_ok(), "{} panicked in `{name}`", path.display());
                ran += 1;
            }
        }
    }
    assert!(ran >= TARGETS.len(), "only {ran} inputs replayed");
}
