//! The command line: kubectl 1.17's `rolling-update` flags with their help texts,
//! plus the three knobs 1.17 hard-wired (`--max-surge`, `--max-unavailable`,
//! `--min-ready-seconds`).

use std::time::Duration;

use clap::Parser;

use crate::fencepost::IntOrPercent;

const ABOUT: &str = "Perform a rolling update. This command is deprecated, use rollout instead.";

const LONG_ABOUT: &str = "\
Perform a rolling update of the given ReplicationController.

Replaces the specified replication controller with a new replication controller by updating one pod at a time to use the new PodTemplate. The new-controller.json must specify the same namespace as the existing replication controller and overwrite at least one (common) label in its replicaSelector.

![Workflow](http://kubernetes.io/images/docs/kubectl_rollingupdate.svg)

Differences from kubectl 1.17 (same flags, annotations, output lines and exit codes):
  * --timeout is honoured (1.17 always used 5m).
  * --dry-run changes nothing in the cluster, also with --image; --dry-run=client|server are accepted.
  * --container is respected when comparing images.
  * -f (a file, - or a URL) is read and checked before the cluster is contacted, and its object must be in the command's namespace even without -n.
  * Waiting follows watch events: a step is taken as soon as replica counts and pod readiness allow; --update-period is the minimum time between a scale-up and the following scale-down.
  * --max-surge, --max-unavailable and --min-ready-seconds are flags (1.17 fixed them at 1, 0, 0).
  * --timeout also bounds each request: a server that stops answering ends the run.
  * Ctrl-C/SIGTERM stop between API calls (a second one at once); re-running the same command resumes. An update stopped at any point, kill -9 included, is finished by re-running it.";

const EXAMPLES: &str = "\
Examples:
  # Update pods of frontend-v1 using new replication controller data in frontend-v2.json.
  kubectl rolling-update frontend-v1 -f frontend-v2.json

  # Update pods of frontend-v1 using JSON data passed into stdin.
  cat frontend-v2.json | kubectl rolling-update frontend-v1 -f -

  # Update the pods of frontend-v1 to frontend-v2 by just changing the image, and switching the
  # name of the replication controller.
  kubectl rolling-update frontend-v1 frontend-v2 --image=image:v2

  # Update the pods of frontend by just changing the image, and keeping the old name.
  kubectl rolling-update frontend --image=image:v2

  # Abort and reverse an existing rollout in progress (from frontend-v1 to frontend-v2).
  kubectl rolling-update frontend-v1 frontend-v2 --rollback";

fn go_duration(s: &str) -> Result<Duration, String> {
    shared::flags::parse_go_duration(s, false)
}

/// `--dry-run` values. Parsed here rather than with `shared::flags::DryRunFlags`
/// because a bare `--dry-run` is this command's own 1.17 syntax, not a deprecated
/// spelling: scripts written for it must not get a deprecation warning on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryRun {
    None,
    Client,
    Server,
}

fn dry_run(s: &str) -> Result<DryRun, String> {
    match s {
        "none" | "false" => Ok(DryRun::None),
        // A bare `--dry-run` (1.17's boolean) and `--dry-run=true` mean client.
        "client" | "true" => Ok(DryRun::Client),
        "server" => Ok(DryRun::Server),
        other => Err(format!(
            "Invalid dry-run value ({other}). Must be \"none\", \"server\", or \"client\"."
        )),
    }
}

/// `kubectl rolling-update`.
#[derive(Parser, Debug)]
#[command(
    name = "kubectl rolling-update",
    bin_name = "kubectl rolling-update",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = EXAMPLES,
    term_width = 100,
    override_usage = "kubectl rolling-update OLD_CONTROLLER_NAME ([NEW_CONTROLLER_NAME] --image=NEW_CONTAINER_IMAGE | -f NEW_CONTROLLER_SPEC) [options]",
)]
pub struct Args {
    /// OLD_CONTROLLER_NAME and the optional NEW_CONTROLLER_NAME (further arguments are ignored, as in kubectl)
    #[arg(verbatim_doc_comment, value_name = "NAME")]
    pub args: Vec<String>,

    /// Time to wait between updating pods. Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h".
    #[arg(verbatim_doc_comment, long, value_name = "DURATION", default_value = "1m0s", value_parser = go_duration)]
    pub update_period: Duration,

    /// Time delay between polling for replication controller status after the update. Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h".
    #[arg(verbatim_doc_comment, long, value_name = "DURATION", default_value = "3s", value_parser = go_duration)]
    pub poll_interval: Duration,

    /// Max time to wait for a replication controller to update before giving up. Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h".
    #[arg(verbatim_doc_comment, long, value_name = "DURATION", default_value = "5m0s", value_parser = go_duration)]
    pub timeout: Duration,

    /// Filename or URL to file to use to create the new replication controller.
    #[arg(
        verbatim_doc_comment,
        short = 'f',
        long = "filename",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub filenames: Vec<String>,

    /// Image to use for upgrading the replication controller. Must be distinct from the existing image (either new image or new image tag).  Can not be used with --filename/-f
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "IMAGE",
        default_value = "",
        hide_default_value = true
    )]
    pub image: String,

    /// The key to use to differentiate between two different controllers, default 'deployment'.  Only relevant when --image is specified, ignored otherwise
    #[arg(verbatim_doc_comment, long, value_name = "KEY", default_value = crate::names::DEFAULT_DEPLOYMENT_KEY)]
    pub deployment_label_key: String,

    /// Container name which will have its image upgraded. Only relevant when --image is specified, ignored otherwise. Required when using --image on a multi-container pod
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "NAME",
        default_value = "",
        hide_default_value = true
    )]
    pub container: String,

    /// Explicit policy for when to pull container images. Required when --image is same as existing image, ignored otherwise.
    #[arg(
        verbatim_doc_comment,
        long,
        value_name = "POLICY",
        default_value = "",
        hide_default_value = true
    )]
    pub image_pull_policy: String,

    /// If true, this is a request to abort an existing rollout that is partially rolled out. It effectively reverses current and next and runs a rollout
    #[arg(verbatim_doc_comment, long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_value = "false", default_missing_value = "true", value_parser = shared::flags::parse_go_bool)]
    pub rollback: bool,

    /// Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource. A bare --dry-run means client.
    #[arg(verbatim_doc_comment, long, value_name = "STRATEGY", num_args = 0..=1, require_equals = true, default_value = "none", default_missing_value = "client", value_parser = dry_run)]
    pub dry_run: DryRun,

    /// If true, use a schema to validate the input before sending it
    #[arg(verbatim_doc_comment, long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_value = "true", default_missing_value = "true", value_parser = shared::flags::parse_go_bool)]
    pub validate: bool,

    /// The maximum number of pods that can be scheduled above the desired number of pods (an integer or a percentage of the desired pods, rounded up).
    #[arg(verbatim_doc_comment, long, value_name = "N|N%", default_value = "1")]
    pub max_surge: IntOrPercent,

    /// The maximum number of pods that can be unavailable during the update (an integer or a percentage of the desired pods, rounded down). If both resolve to 0, 1 pod may be unavailable.
    #[arg(verbatim_doc_comment, long, value_name = "N|N%", default_value = "0")]
    pub max_unavailable: IntOrPercent,

    /// Minimum number of seconds a new pod must be Ready before it counts as available.
    #[arg(verbatim_doc_comment, long, value_name = "SECONDS", default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..))]
    pub min_ready_seconds: i32,

    #[command(flatten)]
    pub print: shared::flags::PrintFlags,

    /// `--record` (hidden, deprecated): parsed and warned about; see [`parse`].
    #[command(flatten)]
    pub record: shared::flags::RecordFlags,

    #[command(flatten)]
    pub config: shared::flags::ConfigFlags,
}

/// Parses `argv`, then completes `--record`'s change cause from the matches (what
/// `try_parse_from` alone cannot give). The change cause is for the new
/// ReplicationController: `args.record.to_recorder()` is `Some` with `--record`.
pub fn parse(argv: &[std::ffi::OsString]) -> Result<Args, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let cmd = Args::command();
    let matches = cmd.clone().try_get_matches_from(argv)?;
    let mut args = Args::from_arg_matches(&matches)?;
    args.record
        .complete("kubectl rolling-update", &cmd, &matches);
    Ok(args)
}
