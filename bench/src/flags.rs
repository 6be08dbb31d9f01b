//! The bench's cases and flags (`cargo xtask bench [CASE…] [FLAGS]`).

use std::path::PathBuf;

/// Measure the plugins against the real kubectl, side by side, on the same cluster.
///
/// Builds the release binaries, starts the local cluster with an audit log (or uses
/// KUBECONFIG with --existing), runs each case for both commands alternately after a
/// warm-up, and writes target/bench/<date>/results.md and chart.svg.
#[derive(clap::Parser, Debug)]
#[command(name = "cargo xtask bench", bin_name = "cargo xtask bench")]
pub struct Bench {
    /// Cases to run: names from --list, `*` matching any text (`'create-file-500-*'`),
    /// or `default` for the default set, which is what runs when none is given.
    #[arg(value_name = "CASE")]
    pub cases: Vec<String>,
    /// Also run the matrix: run-pod create, create-file 50/500/5,000 and
    /// rolling-update 10 at 0, 25 and 100 ms round trip, each with cold and warm
    /// client caches. Alone: the matrix only; `default --matrix`: both.
    #[arg(long)]
    pub matrix: bool,
    /// Use the cluster of KUBECONFIG instead of starting the local one.
    #[arg(long)]
    pub existing: bool,
    /// The apiserver's audit log of the --existing cluster (to count API requests).
    #[arg(long, value_name = "FILE", requires = "existing")]
    pub audit_log: Option<PathBuf>,
    /// Measured runs per command, after one warm-up run each [default: 5; 3 in the
    /// matrix's cells, where kubectl may run fewer times, as the report says].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: Option<u32>,
    /// List the cases and exit.
    #[arg(long)]
    pub list: bool,
    /// Benchmark the plugin binaries in DIR instead of building release binaries.
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Where to write results.md and chart.svg (default: target/bench/<date>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
