//! `--help` in kubectl's layout: description, examples, one `--flag=default:` block per
//! option sorted by name, usage, and the `kubectl options` pointer — rendered from the
//! clap definitions so that flags and help never drift apart.
//!
//! clap's own layout differs from cobra's, and users compare our help with kubectl's
//! side by side, so plugins that mirror a kubectl command render it this way.

use std::fmt::Write as _;

use clap::ArgAction;

/// The help heading of [`crate::flags::ConfigFlags`].
pub const GLOBAL_HEADING: &str = "Global options";

/// The fixed texts of one command's help.
#[derive(Debug, Clone, Copy)]
pub struct HelpText<'a> {
    /// The description (kubectl's `Long`).
    pub long: &'a str,
    /// Indented examples, as kubectl prints them.
    pub examples: &'a str,
    /// The usage line, without the leading indentation.
    pub usage: &'a str,
}

/// The full help text.
pub fn render(cmd: &clap::Command, text: &HelpText<'_>) -> String {
    let mut out = format!(
        "{}\n\nExamples:\n{}\n\nOptions:\n",
        text.long, text.examples
    );
    let is_global = |a: &clap::Arg| a.get_help_heading() == Some(GLOBAL_HEADING);
    write_flags(&mut out, cmd, |a| !is_global(a));
    // kubectl leaves its global flags to `kubectl options`; a plugin parses them itself
    // (kubectl does not pass its own on), so they are listed after the command's own.
    out.push_str("Global options:\n");
    write_flags(&mut out, cmd, is_global);
    let _ = write!(
        out,
        "Usage:\n  {}\n\nUse \"kubectl options\" for a list of global command-line options (applies to all commands).\n",
        text.usage
    );
    out
}

/// One `    -s, --long=DEFAULT:\n\tHELP\n\n` block per selected flag, sorted by name.
fn write_flags(out: &mut String, cmd: &clap::Command, select: impl Fn(&clap::Arg) -> bool) {
    let mut args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .filter(|a| a.get_long().is_some_and(|l| l != "help"))
        .filter(|a| select(a))
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
            pflag_default(arg)
        );
    }
}

/// A flag's default in pflag's notation: `false`, `[]`, bare numbers, booleans and
/// durations, `'text'` for strings.
pub fn pflag_default(arg: &clap::Arg) -> String {
    // Three global flags whose kubectl type the default's text does not tell: a string
    // that reads like a number, klog's own type (printed bare, even when empty), and a
    // default kubectl computes from the environment.
    match arg.get_long() {
        Some("request-timeout") => return "'0'".into(),
        Some("vmodule") => return String::new(),
        Some("cache-dir") => {
            let dir = resources::DiscoveryCache::default_root()
                .unwrap_or_else(|| std::path::Path::new(".kube").join("cache"));
            return format!("'{}'", dir.display());
        }
        _ => {}
    }
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
        crate::flags::parse_go_duration(&value, false).is_ok() && value.ends_with('s');
    let is_bool = value == "false" || value == "true";
    if is_number || is_duration || is_bool {
        value
    } else {
        format!("'{value}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        /// Names
        #[arg(long)]
        name: Vec<String>,
        /// Dry
        #[arg(long)]
        dry: bool,
        /// Count
        #[arg(short = 'c', long, default_value_t = 3)]
        count: u32,
        /// Wait
        #[arg(long, default_value = "1m0s")]
        timeout: String,
        /// Mode
        #[arg(long, default_value = "strict")]
        mode: String,
        #[command(flatten)]
        config: crate::flags::ConfigFlags,
    }

    #[test]
    fn kubectl_layout_with_pflag_defaults() {
        use clap::CommandFactory;
        let text = HelpText {
            long: "Do it.",
            examples: "  # ex\n  kubectl x",
            usage: "kubectl x [options]",
        };
        let help = render(&Cli::command(), &text);
        let expected = "Do it.\n\nExamples:\n  # ex\n  kubectl x\n\nOptions:\n\
            \x20   -c, --count=3:\n\tCount\n\n\
            \x20   --dry=false:\n\tDry\n\n\
            \x20   --mode='strict':\n\tMode\n\n\
            \x20   --name=[]:\n\tNames\n\n\
            \x20   --timeout=1m0s:\n\tWait\n\n\
            Global options:\n";
        assert!(help.starts_with(expected), "{help}");
        assert!(help.contains("Global options:\n    --as='':"), "{help}");
        assert!(help.ends_with(
            "Usage:\n  kubectl x [options]\n\n\
             Use \"kubectl options\" for a list of global command-line options (applies to all commands).\n"
        ));
    }
}
