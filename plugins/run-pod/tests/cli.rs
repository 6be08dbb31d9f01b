//! CLI transcripts: `--help`, usage errors and `--dry-run=client` output, byte for
//! byte, with no cluster and no kubeconfig (KUBECONFIG points at nothing, so the
//! namespace is `default`). Refresh with `TRYCMD=overwrite cargo test -p kubectl-run_pod --test cli`
//! and review the diff: every expected output was first checked against kubectl 1.32.

#[test]
fn transcripts() {
    trycmd::TestCases::new()
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env("HOME", "/nonexistent")
        .case("tests/cmd/*.toml")
        .case("tests/cmd/*.trycmd");
}
