//! CLI transcripts (trycmd): `--help`, usage errors and `--dry-run=client` output,
//! byte for byte, with no cluster. Each case in `cmd/*.toml` runs with `KUBECONFIG`
//! pointing at a missing file, so the plugin has no server and maps kinds offline.
//!
//! Refresh after an intended change with `TRYCMD=overwrite cargo test -p kubectl-create_file --test cli`.

#[test]
fn cli() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
