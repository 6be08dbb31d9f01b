//! The command line of `kubectl run-pod`: kubectl 1.32's `run` flags plus the legacy
//! ones of kubectl ≤ 1.17 (`--generator`, `--replicas`, `--schedule`, `--expose`'s
//! `--service-generator`/`--service-overrides`, `--hostport`, `--requests`,
//! `--limits`, `--serviceaccount`).
//!
//! Help strings are kubectl's, verbatim (hence `help = …` rather than doc comments,
//! which clap would trim). Boolean flags are plain switches here; [`command`] gives
//! them pflag's `--flag=false`. Defaults are declared here so that `--help` shows them;
//! whether a flag was given explicitly is read from clap's `ArgMatches` (see
//! [`Explicit`]). kubectl's global flags, `--record`, `-h` and `--version` are the
//! skeleton's ([`PLUGIN`]).

use clap::{CommandFactory, Parser};

use cli::Plugin;
use cli::flags::{DryRunFlags, FieldManagerFlags, PrintFlags, SaveConfigFlags};

/// The plugin, for `cli::run`.
pub const PLUGIN: Plugin = Plugin {
    name: "kubectl run-pod",
    crate_name: env!("CARGO_CRATE_NAME"),
    flags,
    help: crate::help::TEXT,
    completion: &[],
};

/// The plugin's own flags; `--field-manager` defaults to kubectl run's manager.
fn flags() -> clap::Command {
    FieldManagerFlags::default_manager(Args::command(), "kubectl-run")
}

/// `kubectl run-pod` flags.
#[derive(Parser, Debug)]
#[command(
    name = "kubectl run-pod",
    bin_name = "kubectl run-pod",
    about = "Create and run a particular image in a pod.",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Args {
    /// The object name; `None` when missing (reported as kubectl does).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,

    /// Arguments after NAME given without `--`.
    #[arg(value_name = "ARGS")]
    pub args: Vec<String>,

    /// Arguments after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub dash_args: Vec<String>,

    #[arg(
        long,
        value_name = "KEY=VALUE",
        help = "Annotations to apply to the pod."
    )]
    pub annotations: Vec<String>,

    #[arg(
        long,
        help = "If true, wait for the Pod to start running, and then attach to the Pod as if 'kubectl attach ...' were called.  Default false, unless '-i/--stdin' is set, in which case the default is true. With '--restart=Never' the exit code of the container process is returned."
    )]
    pub attach: bool,

    /// Checked in `RunPodOptions::complete`, where kubectl checks it (after `--dry-run`
    /// and `-o`); a bare `--cascade` is `background`, as pflag's NoOptDefVal makes it.
    #[arg(
        long,
        default_value = "background",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "background",
        help = "Must be \"background\", \"orphan\", or \"foreground\". Selects the deletion cascading strategy for the dependents (e.g. Pods created by a ReplicationController). Defaults to background."
    )]
    pub cascade: String,

    #[arg(
        long,
        help = "If true and extra arguments are present, use them as the 'command' field in the container, rather than the 'args' field which is the default."
    )]
    pub command: bool,

    #[command(flatten)]
    pub dry_run: DryRunFlags,

    /// Parsed where kubectl 1.37 parses it: when a raw `-it` session attaches.
    #[arg(
        long,
        default_value = crate::attach::detach::DEFAULT,
        help = "Override the key sequence for detaching a container."
    )]
    pub detach_keys: String,

    #[arg(
        long,
        value_name = "KEY=VALUE",
        help = "Environment variables to set in the container."
    )]
    pub env: Vec<String>,

    #[arg(
        long,
        help = "If true, create a ClusterIP service associated with the pod.  Requires `--port`."
    )]
    pub expose: bool,

    #[command(flatten)]
    pub field_manager: FieldManagerFlags,

    #[arg(
        long,
        help = "If true, immediately remove resources from API and bypass graceful deletion. Note that immediate deletion of some resources may result in inconsistency or data loss and requires confirmation."
    )]
    pub force: bool,

    #[arg(
        long,
        help = "The name of the API generator to use: run-pod/v1 (default), run/v1, deployment/apps.v1, deployment/apps.v1beta1, deployment/v1beta1, job/v1, cronjob/v1, cronjob/v1beta1 or cronjob/v2alpha1."
    )]
    pub generator: Option<String>,

    #[arg(
        long,
        default_value_t = -1,
        allow_negative_numbers = true,
        value_parser = cli::flags::go_int,
        help = "Period of time in seconds given to the resource to terminate gracefully. Ignored if negative. Set to 1 for immediate shutdown. Can only be set to 0 when --force is true (force deletion)."
    )]
    pub grace_period: i64,

    #[arg(
        long,
        default_value_t = -1,
        allow_negative_numbers = true,
        value_parser = cli::flags::go_int32,
        help = "The host port mapping for the container port. To demonstrate a single-machine container."
    )]
    pub hostport: i32,

    #[arg(long, help = "The image for the container to run.")]
    pub image: Option<String>,

    #[arg(
        long,
        default_value = "",
        help = "The image pull policy for the container.  If left empty, this value will not be specified by the client and defaulted by the server."
    )]
    pub image_pull_policy: String,

    #[arg(
        short = 'l',
        long,
        default_value = "",
        help = "Comma separated labels to apply to the pod. Will override previous values."
    )]
    pub labels: String,

    #[arg(
        long,
        help = "If the pod is started in interactive mode or with stdin, leave stdin open after the first attach completes. By default, stdin will be closed after the first attach completes."
    )]
    pub leave_stdin_open: bool,

    #[arg(
        long,
        default_value = "",
        help = "The resource requirement limits for this container.  For example, 'cpu=200m,memory=512Mi'.  Note that server side components may assign limits depending on the server configuration, such as limit ranges."
    )]
    pub limits: String,

    #[command(flatten)]
    pub print: PrintFlags,

    #[arg(
        long,
        default_value = "merge",
        help = "The method used to override the generated object: json, merge, or strategic."
    )]
    pub override_type: String,

    #[arg(
        long,
        default_value = "",
        help = "An inline JSON override for the generated object. If this is non-empty, it is used to override the generated object. Requires that the object supply a valid apiVersion field."
    )]
    pub overrides: String,

    #[arg(
        long,
        default_value = "1m0s",
        value_parser = cli::flags::go_duration,
        help = "The length of time (like 5s, 2m, or 3h, higher than zero) to wait until at least one pod is running"
    )]
    pub pod_running_timeout: std::time::Duration,

    #[arg(
        long,
        default_value = "",
        help = "The port that this container exposes."
    )]
    pub port: String,

    #[arg(long, help = "If true, run the container in privileged mode.")]
    pub privileged: bool,

    #[arg(short = 'q', long, help = "If true, suppress prompt messages.")]
    pub quiet: bool,

    #[arg(
        short = 'r',
        long,
        default_value_t = 1,
        allow_negative_numbers = true,
        value_parser = cli::flags::go_int32,
        help = "Number of replicas to create for this container (run/v1 and deployment/* only). Default is 1."
    )]
    pub replicas: i32,

    #[arg(
        long,
        default_value = "",
        help = "The resource requirement requests for this container.  For example, 'cpu=100m,memory=256Mi'.  Note that server side components may assign requests depending on the server configuration, such as limit ranges."
    )]
    pub requests: String,

    #[arg(
        long,
        default_value = "Always",
        help = "The restart policy for this Pod.  Legal values [Always, OnFailure, Never]."
    )]
    pub restart: String,

    #[arg(
        long,
        help = "If true, delete the pod after it exits.  Only valid when attaching to the container, e.g. with '--attach' or with '-i/--stdin'."
    )]
    pub rm: bool,

    #[command(flatten)]
    pub save_config: SaveConfigFlags,

    #[arg(
        long,
        default_value = "",
        help = "A schedule in the Cron format the job should be run with (creates a CronJob)."
    )]
    pub schedule: String,

    #[arg(
        long,
        default_value = "service/v2",
        help = "The name of the generator to use for creating a service.  Only used if --expose is true"
    )]
    pub service_generator: String,

    #[arg(
        long,
        default_value = "",
        help = "An inline JSON override for the generated service object. If this is non-empty, it is used to override the generated object. Requires that the object supply a valid apiVersion field.  Only used if --expose is true."
    )]
    pub service_overrides: String,

    #[arg(
        long,
        default_value = "",
        help = "Service account to set in the pod spec."
    )]
    pub serviceaccount: String,

    #[arg(
        short = 'i',
        long,
        help = "Keep stdin open on the container in the pod, even if nothing is attached."
    )]
    pub stdin: bool,

    /// A Go duration, checked while parsing as pflag does (`--timeout=abc` is refused).
    /// kubectl run then ignores it, as it does `--wait`: its `--rm` deletion never
    /// waits (`WaitForDeletion = false`), and neither does this one.
    #[arg(
        long,
        default_value = "0s",
        value_parser = parse_signed_duration,
        help = "The length of time to wait before giving up on a delete, zero means determine a timeout from the size of the object"
    )]
    pub timeout: String,

    #[arg(
        short = 't',
        long,
        help = "Allocate a TTY for the container in the pod."
    )]
    pub tty: bool,

    #[arg(
        long,
        help = "If true, wait for resources to be gone before returning. This waits for finalizers."
    )]
    pub wait: bool,
}

/// Go's `time.ParseDuration` (negative values included) for `--timeout`, keeping the
/// text: the value is only validated (see the field).
fn parse_signed_duration(value: &str) -> Result<String, String> {
    cli::flags::parse_go_duration_signed(value).map(|_| value.to_string())
}

/// Which flags were typed on the command line (as opposed to defaulted): kubectl's
/// `cmd.Flags().Changed(…)`, needed where a default means "choose for me".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Explicit {
    /// `--attach` given: `-i` then no longer implies attaching.
    pub attach: bool,
    /// `--restart` given: the legacy generators keep it instead of their default.
    pub restart: bool,
    /// `--replicas` given: selects `deployment/apps.v1` when no generator is named.
    pub replicas: bool,
}

impl Explicit {
    /// From kubectl's `Changed`: `changed(id)` tells whether flag `id` was typed.
    pub fn from_changed(changed: impl Fn(&str) -> bool) -> Self {
        Self {
            attach: changed("attach"),
            restart: changed("restart"),
            replicas: changed("replicas"),
        }
    }
}

/// Parses `argv` as the skeleton does, for tests: the flags and their [`Context`].
///
/// [`Context`]: cli::Context
#[cfg(test)]
pub fn parse_from<I, T>(argv: I) -> anyhow::Result<(Args, cli::Context)>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let (args, matches) = PLUGIN.parse::<Args>(argv)?;
    let ctx = cli::Context::new(PLUGIN.name, &PLUGIN.command(), matches)?;
    Ok((args, ctx))
}

/// The full clap command (the skeleton's flags included), for tests.
#[cfg(test)]
pub fn command() -> clap::Command {
    PLUGIN.command()
}
