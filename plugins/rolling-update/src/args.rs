//! The command line: kubectl 1.17's `rolling-update` flags with their help texts,
//! plus the three knobs 1.17 hard-wired (`--max-surge`, `--max-unavailable`,
//! `--min-ready-seconds`). kubectl's global flags, `--record`, `-h` and `--version`
//! are the skeleton's ([`PLUGIN`]); boolean switches take pflag's `--x=false`.

use std::time::Duration;

use clap::{CommandFactory, Parser};

use cli::Plugin;
use cli::completion::Source;
use cli::flags::{DryRunFlags, PrintFlags};

use crate::fencepost::IntOrPercent;

/// The plugin, for `cli::run`.
pub const PLUGIN: Plugin = Plugin {
    name: "kubectl rolling-update",
    crate_name: env!("CARGO_CRATE_NAME"),
    flags: command,
    help: crate::help::TEXT,
    completion: &[Source::ReplicationControllers],
};

/// `--dry-run`'s help: kubectl's, and what a bare `--dry-run` means here.
const DRY_RUN_HELP: &str = "Must be \"none\", \"server\", or \"client\". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource. A bare --dry-run means client.";

/// The plugin's own flags. `--dry-run` was a boolean in 1.17: its old spellings are
/// this command's syntax, not deprecated ones (see [`DryRunFlags::boolean_syntax`]).
fn command() -> clap::Command {
    DryRunFlags::boolean_syntax(Args::command(), DRY_RUN_HELP)
}

/// `kubectl rolling-update`.
#[derive(Parser, Debug)]
#[command(
    name = "kubectl rolling-update",
    bin_name = "kubectl rolling-update",
    about = "Perform a rolling update. This command is deprecated, use rollout instead."
)]
pub struct Args {
    /// OLD_CONTROLLER_NAME and the optional NEW_CONTROLLER_NAME (further arguments are ignored, as in kubectl)
    #[arg(verbatim_doc_comment, value_name = "NAME")]
    pub args: Vec<String>,

    /// Time to wait between updating pods. Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h".
    #[arg(verbatim_doc_comment, long, value_name = "DURATION", default_value = "1m0s", value_parser = cli::flags::go_duration)]
    pub update_period: Duration,

    /// Time delay between polling for replication controller status after the update. Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h".
    #[arg(verbatim_doc_comment, long, value_name = "DURATION", default_value = "3s", value_parser = cli::flags::go_duration)]
    pub poll_interval: Duration,

    /// Max time to wait for a replication controller to update before giving up. Valid time units are "ns", "us" (or "µs"), "ms", "s", "m", "h".
    #[arg(verbatim_doc_comment, long, value_name = "DURATION", default_value = "5m0s", value_parser = cli::flags::go_duration)]
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
    #[arg(verbatim_doc_comment, long)]
    pub rollback: bool,

    #[command(flatten)]
    pub dry_run: DryRunFlags,

    /// If true, use a schema to validate the input before sending it
    #[arg(verbatim_doc_comment, long, default_value = "true")]
    pub validate: bool,

    /// The maximum number of pods that can be scheduled above the desired number of pods (an integer or a percentage of the desired pods, rounded up).
    #[arg(verbatim_doc_comment, long, value_name = "N|N%", default_value = "1")]
    pub max_surge: IntOrPercent,

    /// The maximum number of pods that can be unavailable during the update (an integer or a percentage of the desired pods, rounded down). If both resolve to 0, 1 pod may be unavailable.
    #[arg(verbatim_doc_comment, long, value_name = "N|N%", default_value = "0")]
    pub max_unavailable: IntOrPercent,

    /// Minimum number of seconds a new pod must be Ready before it counts as available.
    #[arg(verbatim_doc_comment, long, value_name = "SECONDS", default_value_t = 0, allow_negative_numbers = true, value_parser = non_negative_seconds)]
    pub min_ready_seconds: i32,

    /// If true, stop waiting as soon as the new pods fail in a way that cannot fix itself (refused by admission for what the template asks, other than a quota; an invalid template or image name), with the command to resume. If false, wait for --timeout, as kubectl 1.17 did.
    #[arg(verbatim_doc_comment, long, default_value = "true")]
    pub fail_fast: bool,

    #[command(flatten)]
    pub print: PrintFlags,
}

/// `--min-ready-seconds`: a number as Go's `strconv.ParseInt` reads pflag's `int32`
/// flags, and not negative.
fn non_negative_seconds(value: &str) -> Result<i32, String> {
    match cli::flags::go_int32(value) {
        Ok(n) if n < 0 => Err(format!("{n} is not in 0..={}", i32::MAX)),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        let argv = std::iter::once("kubectl-rolling_update").chain(argv.iter().copied());
        PLUGIN.parse::<Args>(argv).map(|(args, _)| args)
    }

    #[test]
    fn command_is_well_formed() {
        PLUGIN.command().debug_assert();
    }

    #[test]
    fn flags_follow_the_house_rules() {
        assert_eq!(PLUGIN.lint(), Vec::<String>::new());
    }

    #[test]
    fn dry_run_keeps_its_boolean_syntax() {
        let strategy = |argv: &[&str]| {
            let mut warnings = Vec::new();
            let dry = parse(argv).expect("parses").dry_run;
            let strategy = dry.to_strategy(&mut warnings).expect("valid");
            (strategy, warnings)
        };
        use cli::flags::DryRunStrategy::{Client, None, Server};
        assert_eq!(strategy(&["x"]).0, None);
        assert_eq!(strategy(&["x", "--dry-run"]).0, Client);
        assert_eq!(strategy(&["x", "--dry-run=true"]).0, Client);
        assert_eq!(strategy(&["x", "--dry-run=false"]).0, None);
        assert_eq!(strategy(&["x", "--dry-run=server"]).0, Server);
        let err = parse(&["x", "--dry-run=later"]).expect_err("refused while parsing");
        assert!(
            err.to_string().contains("Invalid dry-run value (later)"),
            "{err}"
        );
    }

    #[test]
    fn switches_take_go_booleans() {
        assert!(parse(&["x", "--rollback"]).expect("bare").rollback);
        assert!(!parse(&["x", "--rollback=false"]).expect("false").rollback);
        assert!(!parse(&["x", "--validate=0"]).expect("validate").validate);
    }
}
