//! The command line of `kubectl create-file`: kubectl 1.32's `create -f` flags, plus
//! `--concurrency`, `--timeout` and `--wait` for what this plugin adds (parallel
//! creates, waiting for CRDs, waiting until what was created is ready).
//!
//! Help strings are kubectl's, verbatim (hence `help = …` rather than doc comments,
//! which clap would trim). kubectl's global flags, `--record`, `-h` and `--version`
//! are the skeleton's ([`PLUGIN`]).

use std::path::PathBuf;

use clap::{CommandFactory, Parser};

use cli::Plugin;
use cli::flags::{DryRunFlags, FieldManagerFlags, PrintFlags, SaveConfigFlags};

/// The plugin, for `cli::run`.
pub const PLUGIN: Plugin = Plugin {
    name: "kubectl create-file",
    crate_name: env!("CARGO_CRATE_NAME"),
    flags,
    help: crate::help::TEXT,
    completion: &[],
};

/// The plugin's own flags; `--field-manager` defaults to kubectl create's manager.
fn flags() -> clap::Command {
    FieldManagerFlags::default_manager(Args::command(), "kubectl-create")
}

/// Creates in flight by default (`--concurrency`), over the one HTTP/2 connection.
///
/// In flight means on the wire as well as in the server, and far away most of them are
/// on the wire: to keep a server busy a client needs the server's rate times the round
/// trip in flight (Little's law). One API server on two cores answers 32 creates in
/// flight in 14–16 ms, about 1.5–2 creates per ms (docs/performance.md, "Far away");
/// 25 ms away, 32 in flight wait a round trip plus the server's time per round, and the
/// server idles while they travel: 500 ConfigMaps took 26–32 round trips where 16
/// rounds would do. 64 covers 25 ms plus the server's time at that rate.
///
/// What loads the server is what has arrived and not been answered: 25 ms away about
/// 64 × 15 / (25 + 15) ≈ 24, fewer than the 32 a near client gave it when this was 32.
/// Near, all 64 are in the server and gain nothing over 32 (the server is the bound),
/// but do not overload it either. kube-apiserver takes 100 streams per HTTP/2
/// connection (250 in older releases; with fewer, hyper waits for a stream to free).
/// With API Priority and Fairness a user's requests share the `global-default`
/// priority level, 49 seats of a default server's 600 (more while it borrows idle
/// levels' seats): beyond its seats requests wait in fair queues, where another user's
/// request goes ahead of our flow's, and beyond the queues the server answers `429`,
/// which halves the limit ([`crate::limit`]). kubectl sends one at a time, so it sets
/// no precedent.
pub const DEFAULT_CONCURRENCY: i64 = 64;

/// `kubectl create-file` flags.
#[derive(Parser, Debug)]
#[command(
    name = "kubectl create-file",
    bin_name = "kubectl create-file",
    about = "Create a resource from a file or from stdin.",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Args {
    /// Positional arguments, which `create -f` does not take (reported as kubectl does).
    #[arg(value_name = "ARGS", hide = true)]
    pub args: Vec<String>,

    #[arg(
        long,
        default_value_t = DEFAULT_CONCURRENCY,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = cli::flags::go_int,
        help = "Maximum number of objects created at the same time (fewer while the server throttles; kinds that affect the admission of later objects, such as LimitRange or ServiceAccount, are created alone, in input order). Results are printed in the order of the input"
    )]
    pub concurrency: i64,

    #[arg(long, help = "Edit the API resource before creating")]
    pub edit: bool,

    #[command(flatten)]
    pub field_manager: FieldManagerFlags,

    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILENAME",
        help = "Filename, directory, or URL to files to use to create the resource"
    )]
    // Each value as typed: split on commas by `cli::flags::get_string_slice` (pflag's
    // stringSlice, where an empty value adds no file).
    pub filenames: Vec<String>,

    #[arg(
        short = 'k',
        long = "kustomize",
        value_name = "DIR",
        value_parser = cli::flags::go_path(),
        help = "Process the kustomization directory. This flag can't be used together with -f or -R. Only a local directory (not a URL); it is built by `kubectl kustomize` of the kubectl that ran the plugin (KUBECTL_PATH), else of the first kubectl on PATH, else by `kustomize build`."
    )]
    pub kustomize: Option<PathBuf>,

    #[arg(
        long,
        default_value = "",
        value_name = "URI",
        help = "Raw URI to POST to the server.  Uses the transport specified by the kubeconfig file."
    )]
    pub raw: String,

    #[arg(
        short = 'R',
        long,
        help = "Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory."
    )]
    pub recursive: bool,

    #[command(flatten)]
    pub save_config: SaveConfigFlags,

    #[arg(
        short = 'l',
        long,
        default_value = "",
        value_name = "SELECTOR",
        help = "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints."
    )]
    pub selector: String,

    #[arg(
        long,
        default_value = "0s",
        value_name = "DURATION",
        value_parser = cli::flags::go_duration,
        help = "How long to wait: for CustomResourceDefinitions created by this command to become Established before creating their instances, and with --wait, for everything created to become ready. Zero means the default: 1m0s, or 5m0s with --wait"
    )]
    pub timeout: std::time::Duration,

    #[arg(
        long,
        help = "If true, wait until every created object is ready (Deployments rolled out, Pods ready, Jobs complete, claims bound, Services with endpoints…), saying why while it waits; exit 1 as soon as one never will be, and 124 when --timeout runs out"
    )]
    pub wait: bool,

    #[arg(
        long,
        default_value = "strict",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "strict",
        value_name = "MODE",
        help = "Must be one of: strict (or true), warn, ignore (or false). \"true\" or \"strict\" will use a schema to validate the input and fail the request if invalid. It will perform server side validation if ServerSideFieldValidation is enabled on the api-server, but will fall back to less reliable client-side validation if not. \"warn\" will warn about unknown or duplicate fields without blocking the request if server-side field validation is enabled on the API server, and behave as \"ignore\" otherwise. \"false\" or \"ignore\" will not perform any schema validation, silently dropping any unknown or duplicate fields."
    )]
    pub validate: String,

    #[arg(
        long = "windows-line-endings",
        help = "Only relevant if --edit=true. Defaults to the line ending native to your platform."
    )]
    pub windows_line_endings: bool,

    #[command(flatten)]
    pub print: PrintFlags,

    #[command(flatten)]
    pub dry_run: DryRunFlags,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> clap::Command {
        PLUGIN.command()
    }

    fn parse(argv: Vec<std::ffi::OsString>) -> Result<Args, clap::Error> {
        PLUGIN.parse::<Args>(argv).map(|(args, _)| args)
    }

    fn argv(args: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("kubectl-create_file")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect()
    }

    fn parse_args(args: &[&str]) -> Result<Args, clap::Error> {
        parse(argv(args))
    }

    fn message(args: &[&str]) -> String {
        let err = parse_args(args).expect_err("a flag error");
        cli::flag_error_message(&command(), &err, &argv(args))
    }

    #[test]
    fn command_is_well_formed() {
        command().debug_assert();
    }

    #[test]
    fn flags_follow_the_house_rules() {
        assert_eq!(PLUGIN.lint(), Vec::<String>::new());
    }

    #[test]
    fn switches_take_go_booleans() {
        let args =
            parse_args(&["-f", "x", "-R=false", "--edit=true", "--save-config"]).expect("parses");
        assert!(!args.recursive && args.edit && args.save_config.save_config);
        let args = parse_args(&["-f", "x", "-R"]).expect("parses");
        assert!(args.recursive && !args.edit && !args.windows_line_endings);
        let args = parse_args(&["-f", "x", "--wait=true", "--timeout=2m"]).expect("parses");
        assert!(args.wait);
        assert_eq!(args.timeout, std::time::Duration::from_secs(120));
        assert!(
            !parse_args(&["-f", "x", "--wait=false"])
                .expect("parses")
                .wait
        );
    }

    #[test]
    fn filenames_repeat_and_split_on_commas() {
        let args =
            parse_args(&["-f", "a.yaml,b.yaml", "--filename=dir", "-f", "-"]).expect("parses");
        assert_eq!(
            cli::flags::get_string_slice(args.filenames),
            ["a.yaml", "b.yaml", "dir", "-"]
        );
        // pflag: an empty value adds no file (kubectl creates from the others).
        let args = parse_args(&["-f", "a.yaml", "--filename="]).expect("parses");
        assert_eq!(cli::flags::get_string_slice(args.filenames), ["a.yaml"]);
    }

    #[test]
    fn validate_takes_an_optional_attached_value() {
        assert_eq!(
            parse_args(&["-f", "x"]).expect("default").validate,
            "strict"
        );
        assert_eq!(
            parse_args(&["--validate", "-f", "x"])
                .expect("bare")
                .validate,
            "strict"
        );
        assert_eq!(
            parse_args(&["--validate=warn", "-f", "x"])
                .expect("warn")
                .validate,
            "warn"
        );
    }

    #[test]
    fn flag_errors_use_cobras_wording() {
        assert_eq!(message(&["--foo"]), "unknown flag: --foo");
        assert_eq!(message(&["-f"]), "flag needs an argument: 'f' in -f");
        assert_eq!(
            message(&["--filename"]),
            "flag needs an argument: --filename"
        );
        assert_eq!(
            message(&["-f", "x", "-R=maybe"]),
            "invalid argument \"maybe\" for \"-R, --recursive\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax"
        );
        assert_eq!(
            message(&["-f", "x", "--timeout=5x"]),
            "invalid argument \"5x\" for \"--timeout\" flag: time: unknown unit \"x\" in duration \"5x\""
        );
        assert!(
            message(&["--concurrency=many"])
                .starts_with("invalid argument \"many\" for \"--concurrency\" flag: ")
        );
    }

    #[test]
    fn a_missing_value_is_named_as_typed() {
        let needs = |flag: &str| format!("flag needs an argument: {flag}");
        assert_eq!(message(&["-f"]), needs("'f' in -f"));
        assert_eq!(message(&["-R", "-f"]), needs("'f' in -f"));
        assert_eq!(message(&["-Rf"]), needs("'f' in -f"));
        assert_eq!(message(&["--filename"]), needs("--filename"));
        assert_eq!(
            message(&["-f", "a.yaml", "--filename"]),
            needs("--filename")
        );
        assert_eq!(message(&["--filename", "a.yaml", "-f"]), needs("'f' in -f"));
        assert_eq!(message(&["-f", "a.yaml", "-n"]), needs("'n' in -n"));
        assert_eq!(
            message(&["-f", "a.yaml", "--namespace"]),
            needs("--namespace")
        );
        assert_eq!(message(&["-f", "a.yaml", "-o"]), needs("'o' in -o"));
    }
}
