//! `--help` in kubectl's layout (description, examples, one `--flag=default:` block per
//! option sorted by name, usage, the `kubectl options` pointer), rendered from the clap
//! definitions so that flags and help never drift apart.

use std::fmt::Write as _;

use clap::ArgAction;

const LONG: &str =
    "Create a resource from a file or from stdin.\n\n JSON and YAML formats are accepted.";

const EXAMPLES: &str = "  # Create a pod using the data in pod.json
  kubectl create-file -f ./pod.json
  
  # Create a pod based on the JSON passed into stdin
  cat pod.json | kubectl create-file -f -
  
  # Edit the data in registry.yaml in JSON then create the resource using the edited data
  kubectl create-file -f registry.yaml --edit -o json
  
  # Create everything under a directory tree, namespaces and CRDs first
  kubectl create-file -R -f ./manifests/";

const USAGE: &str = "kubectl create-file -f FILENAME [options]";

/// Flags whose default pflag prints without quotes (numbers and durations).
const BARE_DEFAULTS: [&str; 2] = ["concurrency", "timeout"];

/// The full help text.
pub fn render(cmd: &clap::Command) -> String {
    let mut out = format!("{LONG}\n\nExamples:\n{EXAMPLES}\n\nOptions:\n");
    let mut args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set() && a.get_long().is_some())
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

/// A flag's default in pflag's notation: `false`, `[]`, `'text'`, bare numbers.
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
    if BARE_DEFAULTS.contains(&arg.get_id().as_str()) {
        value
    } else {
        format!("'{value}'")
    }
}
