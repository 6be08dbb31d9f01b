//! The freshness test of the generated files xtask writes itself (`.krew/` and, where Go
//! is installed, the gojson table), as rust-analyzer's `sourcegen` tests; the schema's
//! and the golden table's are their crates' generator tests.

use super::*;

#[test]
fn generated_files_are_fresh() {
    let root = crate::paths::project_root();
    let mut out = Output::default();
    krew_templates(&root, &mut out).expect("the krew templates generate");
    gojson_table(&root, &mut out).expect("the gojson table generates");
    for skipped in &out.skipped {
        // Only Go's absence skips, and that is said in the test's output.
        eprintln!("skipped {:?}: {}", skipped.paths, skipped.why);
    }
    assert!(
        out.files.iter().any(|g| g.path.starts_with(".krew")),
        "no krew template was generated"
    );
    let stale = stale(&root, &out);
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}; run `cargo xtask codegen` and commit the result"
    );
}

#[test]
fn a_stale_or_extra_file_is_named() {
    let root = tempfile::tempdir().expect("temp dir");
    std::fs::write(root.path().join("same"), "a").expect("write");
    std::fs::write(root.path().join("edited"), "by hand").expect("write");
    let file = |path: &str, text: &str| Generated {
        path: path.into(),
        contents: text.into(),
    };
    let out = Output {
        files: vec![file("same", "a"), file("edited", "b"), file("missing", "c")],
        extra: vec![PathBuf::from(".krew/gone.yaml")],
        skipped: Vec::new(),
    };
    assert_eq!(
        stale(root.path(), &out),
        [
            PathBuf::from("edited"),
            PathBuf::from("missing"),
            PathBuf::from(".krew/gone.yaml")
        ]
    );
}
