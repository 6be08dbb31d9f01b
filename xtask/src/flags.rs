//! Every task and flag of `cargo xtask`, in one place.

use std::path::PathBuf;

#[derive(clap::Parser, Debug)]
#[command(name = "cargo xtask", about = "kubeplug project automation")]
pub struct Xtask {
    #[command(subcommand)]
    pub task: Task,
}

#[derive(clap::Subcommand, Debug)]
pub enum Task {
    /// Build what the local clusters run, once per machine, into the user cache directory.
    ///
    /// By default (`--kubernetes all`): the current release (v1.37.2: etcd, the control
    /// plane, kubectl, kubelet and kube-proxy from its Go modules, about 20 minutes on
    /// two cores), v1.20.2 (from Debian's source package, about 10 minutes), the node's
    /// Debian packages and the test images, and krew. KUBEBUILDER_ASSETS stands in for
    /// the current control plane, binaries on PATH for 1.20.2's.
    Testenv(Testenv),
    /// Start, stop or locate the local cluster (control plane + a real node).
    Cluster(Cluster),
    /// Everything CI runs: testenv (if needed), build, and every test tier.
    Test(Test),
    /// Check the architecture's invariants on the source tree (layering, `//!` lines,
    /// the code map, doc citations); a second or two, also part of `test`.
    Tidy,
    /// Write every generated file (the schema, the golden table, the gojson table,
    /// `.krew/`) from its generator; with --check, fail naming each stale one instead.
    Codegen(Codegen),
    /// Bring up the local cluster and show each plugin working through kubectl.
    Demo(Demo),
    /// Build release archives, krew manifests and checksums (target/dist).
    Dist(Dist),
    /// Check krew manifests and their archives as krew and krew-index CI would.
    KrewCheck(KrewCheck),
    /// Write a custom krew index (plugins/*.yaml) from the dist manifests.
    Index(Index),
    /// Install the plugins the way krew does, with completion helpers.
    Install(Install),
    /// Measure the plugins against the real kubectl, side by side, on the same cluster.
    ///
    /// Builds the release binaries, starts the local cluster with an audit log (or uses
    /// KUBECONFIG with --existing), runs each case for both commands alternately after a
    /// warm-up, and writes target/bench/<date>/results.md and chart.svg. The `bench`
    /// package does it; `cargo xtask bench --help` lists its cases and flags.
    #[command(disable_help_flag = true)]
    Bench(Bench),
    /// Check the release binaries against their size budget (5 MiB each, stripped, on
    /// glibc Linux; 6 MiB on the other targets).
    ///
    /// Builds them as `dist` does (unless --bin-dir), prints each size against the
    /// budget and fails when one is over.
    Size(Size),
}

#[derive(clap::Args, Debug)]
pub struct Codegen {
    /// Write nothing: generate in memory and fail if a file in the tree differs.
    #[arg(long)]
    pub check: bool,
}

#[derive(clap::Args, Debug)]
pub struct Size {
    /// Target triple to build for [default: the host].
    #[arg(long = "target", value_name = "TRIPLE")]
    pub target: Option<String>,
    /// Check the plugin binaries in DIR instead of building them.
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct Testenv {
    /// Rebuild even if binaries are already available.
    #[arg(long)]
    pub force: bool,
    /// Which release to build: `v1.37.2` (current), `v1.20.2`, or `all` (the default:
    /// both, and krew for the install-in-CI test).
    #[arg(long, value_name = "VERSION")]
    pub kubernetes: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct Cluster {
    #[command(subcommand)]
    pub action: ClusterAction,
    /// State directory (certificates, kubeconfig, logs, pids).
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
pub enum ClusterAction {
    /// Start the cluster in the background; prints the kubeconfig path.
    Up {
        /// The Kubernetes release to run: `v1.37.2` (current, the default) or
        /// `v1.20.2` (default: $KUBEPLUG_KUBERNETES, else current).
        #[arg(long, value_name = "VERSION")]
        kubernetes: Option<String>,
        /// Write a metadata-level audit log (to count API requests).
        #[arg(long)]
        audit: bool,
        /// Number of nodes: 1 (a kubelet and containerd, the cluster in a network
        /// namespace of its own) or 0 (a control plane alone).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
        nodes: u8,
        /// An extra kube-apiserver flag, after the ones the cluster sets (repeatable),
        /// e.g. `--apiserver-arg=--goaway-chance=0.02` for a server that sends GOAWAY
        /// as an HA cluster's do.
        #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
        apiserver_arg: Vec<String>,
    },
    /// Stop every process of the cluster and remove its state.
    Down,
    /// Print `export KUBECONFIG=…` for the running cluster.
    Env,
}

#[derive(clap::Args, Debug)]
pub struct Test {
    /// Only the tiers that need no cluster (unit and transcript tests).
    #[arg(long)]
    pub no_e2e: bool,
    /// Extra arguments for `cargo test` (after `--`).
    #[arg(last = true)]
    pub cargo_args: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct Demo {
    /// Stop the cluster when the demo is done.
    #[arg(long)]
    pub down: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct Dist {
    /// Target triples to build (repeatable); default: the host and every declared
    /// release target whose standard library is installed.
    #[arg(long = "target", value_name = "TRIPLE")]
    pub targets: Vec<String>,
    /// Cargo profile to build with.
    #[arg(long, default_value = "release")]
    pub profile: String,
    /// Output directory [default: target/dist].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only (re)write manifests and checksums from the archives already in the output
    /// directory (e.g. collected from every release runner).
    #[arg(long)]
    pub no_build: bool,
    /// Pack binaries already built for the targets without running cargo build.
    #[arg(long)]
    pub prebuilt: bool,
    /// The program that builds, in cargo's place (e.g. `cross`, which runs cargo in a
    /// container with a cross toolchain); it gets the same arguments.
    #[arg(long, value_name = "PROGRAM")]
    pub cargo: Option<String>,
    /// Where the archives will be downloaded from [default: the GitHub release].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct KrewCheck {
    /// A dist directory (krew/*.yaml + archives) or an index (plugins/*.yaml)
    /// [default: target/dist].
    pub dir: Option<PathBuf>,
    /// Where the archives are, found by the file name of each `uri` [default: DIR].
    #[arg(long, value_name = "DIR")]
    pub archives: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct Index {
    /// The index repository to write (plugins/*.yaml inside).
    pub dir: PathBuf,
    /// The dist directory to take the manifests from [default: target/dist].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct Install {
    /// Installation root, laid out like krew's [default: $KREW_ROOT or ~/.krew].
    #[arg(long, value_name = "DIR")]
    pub prefix: Option<PathBuf>,
    /// Cargo profile to build with.
    #[arg(long, default_value = "release")]
    pub profile: String,
    /// The dist directory to use [default: target/dist].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Install what target/dist already holds, without building.
    #[arg(long)]
    pub no_build: bool,
}

#[derive(clap::Args, Debug)]
pub struct Bench {
    /// The bench's cases and flags, handed on as they are (`cargo xtask bench --help`
    /// is the bench's own help).
    #[arg(
        value_name = "ARG",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<std::ffi::OsString>,
}
