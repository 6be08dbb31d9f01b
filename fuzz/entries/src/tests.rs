//! The saved fuzz corpora, replayed on stable Rust: every file of `fuzz/corpus/<target>/`
//! through the target's entry function, as the fuzzer would run it.

use std::path::{Path, PathBuf};

use super::TARGETS;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("corpus entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every input of `target`'s corpus, on a thread with the 8 MiB stack of a
/// plugin's main thread (where decoding runs; a test thread has 2 MiB), and names the
/// inputs that panicked.
fn replay(target: &'static str) {
    let run = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, run)| *run)
        .expect("a known target");
    let files = corpus(target);
    assert!(
        files.len() >= 3,
        "{target}: the corpus holds too few inputs"
    );
    let failed = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            files
                .into_iter()
                .filter(|path| {
                    let data = std::fs::read(path).expect("read corpus file");
                    std::panic::catch_unwind(|| run(&data)).is_err()
                })
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()
        })
        .expect("spawn")
        .join()
        .expect("replay thread");
    assert!(failed.is_empty(), "{target}: panicked on {failed:?}");
}

#[test]
fn every_target_has_a_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    for (target, _) in TARGETS {
        assert!(dir.join(target).is_dir(), "no corpus for {target}");
    }
}

#[test]
fn manifest_corpus() {
    replay("manifest");
}

#[test]
fn quantity_corpus() {
    replay("quantity");
}

#[test]
fn image_reference_corpus() {
    replay("image_reference");
}

#[test]
fn label_selector_corpus() {
    replay("label_selector");
}

#[test]
fn go_duration_corpus() {
    replay("go_duration");
}

#[test]
fn jsonpath_corpus() {
    replay("jsonpath");
}

#[test]
fn go_template_corpus() {
    replay("go_template");
}

#[test]
fn overrides_corpus() {
    replay("overrides");
}
