//! CLI transcripts: --help, every usage error and flag error, byte for byte.
//! None of them needs a cluster (KUBECONFIG points nowhere in each case).

#[test]
fn transcripts() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
