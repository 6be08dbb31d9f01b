//! `--help` in kubectl's layout (description, examples, one `--flag=default:` block per
//! option sorted by name, usage, the `kubectl options` pointer), rendered from the clap
//! definitions so that flags and help never drift apart.
//!
//! clap's own help layout is different from cobra's; users compare the two commands
//! side by side, so the layout is kubectl's.

use std::fmt::Write as _;

use clap::ArgAction;

/// kubectl run's examples, adjusted to the plugin's name, plus the legacy generators.
const EXAMPLES: &str = r#"  # Start a nginx pod
  kubectl run-pod nginx --image=nginx
  
  # Start a hazelcast pod and let the container expose port 5701
  kubectl run-pod hazelcast --image=hazelcast/hazelcast --port=5701
  
  # Start a hazelcast pod and set environment variables "DNS_DOMAIN=cluster" and "POD_NAMESPACE=default" in the container
  kubectl run-pod hazelcast --image=hazelcast/hazelcast --env="DNS_DOMAIN=cluster" --env="POD_NAMESPACE=default"
  
  # Start a hazelcast pod and set labels "app=hazelcast" and "env=prod" in the container
  kubectl run-pod hazelcast --image=hazelcast/hazelcast --labels="app=hazelcast,env=prod"
  
  # Dry run; print the corresponding API objects without creating them
  kubectl run-pod nginx --image=nginx --dry-run=client
  
  # Start a nginx pod, but overload the spec with a partial set of values parsed from JSON
  kubectl run-pod nginx --image=nginx --overrides='{ "apiVersion": "v1", "spec": { ... } }'
  
  # Start a busybox pod and keep it in the foreground, don't restart it if it exits
  kubectl run-pod -i -t busybox --image=busybox --restart=Never
  
  # Start the nginx pod using the default command, but use custom arguments (arg1 .. argN) for that command
  kubectl run-pod nginx --image=nginx -- <arg1> <arg2> ... <argN>
  
  # Start the nginx pod using a different command and custom arguments
  kubectl run-pod nginx --image=nginx --command -- <cmd> <arg1> ... <argN>
  
  # Start a deployment of 3 nginx replicas (legacy generator)
  kubectl run-pod nginx --image=nginx --replicas=3
  
  # Start a cron job that prints the date every five minutes (legacy generator)
  kubectl run-pod date --image=busybox --schedule="*/5 * * * *" -- date"#;

const USAGE: &str = r#"kubectl run-pod NAME --image=image [--env="key=value"] [--port=port] [--dry-run=server|client] [--overrides=inline-json] [--command] -- [COMMAND] [args...] [options]"#;

/// The full help text.
pub fn render(cmd: &clap::Command) -> String {
    let mut out = String::new();
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let _ = write!(out, "{about}\n\nExamples:\n{EXAMPLES}\n\nOptions:\n");
    let mut args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| {
            !a.is_positional() && !a.is_hide_set() && a.get_long().is_some_and(|l| l != "help")
        })
        // The global kubeconfig flags are kubectl's global options, listed by `kubectl options`.
        .filter(|a| a.get_help_heading() != Some("Global options"))
        .collect();
    args.sort_by_key(|a| a.get_long());
    for arg in args {
        let long = arg.get_long().unwrap_or_default();
        let short = arg
            .get_short()
            .map(|s| format!("-{s}, "))
            .unwrap_or_default();
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let _ = write!(
            out,
            "    {short}--{long}={}:\n\t{help}\n\n",
            default_of(arg)
        );
    }
    let _ = write!(
        out,
        "Usage:\n  {USAGE}\n\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n"
    );
    out
}

/// A flag's default in pflag's notation: `false`, `[]`, `''`, `'text'`, bare numbers
/// and durations.
fn default_of(arg: &clap::Arg) -> String {
    match arg.get_action() {
        ArgAction::SetTrue => return "false".into(),
        ArgAction::Append => return "[]".into(),
        _ => {}
    }
    let value = arg
        .get_default_values()
        .first()
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_number = !value.is_empty()
        && value
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit());
    let is_duration =
        shared::flags::parse_go_duration(&value, false).is_ok() && value.ends_with('s');
    let is_bool = value == "false" || value == "true";
    if is_number || is_duration || is_bool {
        value
    } else {
        format!("'{value}'")
    }
}
