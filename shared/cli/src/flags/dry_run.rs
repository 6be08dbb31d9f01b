//! `--dry-run=none|client|server`, kubectl's `cmdutil.AddDryRunFlag` and
//! `GetDryRunStrategy`.
//!
//! kubectl ≥ 1.18 still accepts the older spellings with a deprecation warning: a bare
//! `--dry-run` and `--dry-run=true` mean `client`, `--dry-run=false` means `none`. Like
//! pflag's optional-value flags, a value must be attached with `=`: in
//! `--dry-run client` the word `client` is a positional argument.

use std::io::Write;

// The strategy itself is the resources crate's, where the Helper sends by it.
pub use resources::rest::DryRunStrategy;

/// An unusable `--dry-run` value. The message is kubectl's, capital letter included.
#[derive(Debug, thiserror::Error)]
#[error("Invalid dry-run value ({0}). Must be \"none\", \"server\", or \"client\".")]
pub struct InvalidDryRun(pub String);

/// The value clap stores for a bare `--dry-run` (pflag's `NoOptDefVal`).
const BARE: &str = "unchanged";

/// The `--dry-run` flag, to `#[command(flatten)]` into a command's arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DryRunFlags {
    /// The dry-run strategy, raw; see [`DryRunFlags::to_strategy`].
    #[arg(
        long = "dry-run",
        help = "Must be \"none\", \"server\", or \"client\". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.",
        value_name = "STRATEGY",
        default_value = "none",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = BARE,
    )]
    pub dry_run: String,
}

impl DryRunFlags {
    /// For a command whose `--dry-run` was a boolean before kubectl 1.18 (rolling-update
    /// is 1.17's): there a bare `--dry-run`, `=true` and `=false` are the command's own
    /// syntax, not deprecated spellings, so scripts written for it must not get
    /// kubectl's deprecation warning (read the flag with a sink for `warnings`); and a
    /// bad value is refused while parsing, as 1.17's boolean flag was. `help` replaces
    /// the flag's help text.
    pub fn boolean_syntax(cmd: clap::Command, help: &'static str) -> clap::Command {
        cmd.mut_arg("dry_run", |arg| {
            arg.help(help).value_parser(|value: &str| {
                parse_dry_run(value, &mut std::io::sink())
                    .map(|_| value.to_string())
                    .map_err(|e| e.to_string())
            })
        })
    }

    /// Parses the flag. Deprecated spellings are accepted with kubectl's warning,
    /// written to `warnings` (stderr in a real command).
    pub fn to_strategy(&self, warnings: &mut dyn Write) -> Result<DryRunStrategy, InvalidDryRun> {
        parse_dry_run(&self.dry_run, warnings)
    }
}

/// The lines of kubectl's `GetDryRunStrategy` (`pkg/cmd/util/helpers.go`) that
/// warn of a deprecated spelling: bare, `=true`-like and `=false`-like.
const HELPERS_BARE: u32 = 714;
const HELPERS_TRUE: u32 = 728;
const HELPERS_FALSE: u32 = 731;

/// kubectl's warning of a deprecated spelling: a klog warning line (`W1202 …
/// helpers.go:714] --dry-run is deprecated…`), as its `klog.Warning` writes it.
fn deprecated(at: u32, message: &str) -> String {
    apiclient::klog::line(
        apiclient::klog::Severity::Warning,
        "helpers.go",
        at,
        message,
    )
}

/// [`DryRunFlags::to_strategy`] on a bare string.
pub fn parse_dry_run(
    value: &str,
    warnings: &mut dyn Write,
) -> Result<DryRunStrategy, InvalidDryRun> {
    // Go's strconv.ParseBool spellings come first, exactly as GetDryRunStrategy does.
    let boolean = match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    };
    // A failed warning write (closed stderr) must not turn a valid flag into an error.
    match boolean {
        Some(true) => {
            let _ = warnings.write_all(deprecated(HELPERS_TRUE, &format!("--dry-run={value} is deprecated (boolean value) and can be replaced with --dry-run=client.")).as_bytes());
            Ok(DryRunStrategy::Client)
        }
        Some(false) => {
            let _ = warnings.write_all(deprecated(HELPERS_FALSE, &format!("--dry-run={value} is deprecated (boolean value) and can be replaced with --dry-run=none.")).as_bytes());
            Ok(DryRunStrategy::None)
        }
        None => match value {
            BARE => {
                let _ = warnings.write_all(
                    deprecated(
                        HELPERS_BARE,
                        "--dry-run is deprecated and can be replaced with --dry-run=client.",
                    )
                    .as_bytes(),
                );
                Ok(DryRunStrategy::Client)
            }
            "client" => Ok(DryRunStrategy::Client),
            "server" => Ok(DryRunStrategy::Server),
            "none" => Ok(DryRunStrategy::None),
            other => Err(InvalidDryRun(other.to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        dry_run: DryRunFlags,
        args: Vec<String>,
    }

    fn strategy(argv: &[&str]) -> (Result<DryRunStrategy, String>, String, Vec<String>) {
        let cmd = Cmd::try_parse_from(std::iter::once("cmd").chain(argv.iter().copied()))
            .expect("parses");
        let mut warn = Vec::new();
        let s = cmd
            .dry_run
            .to_strategy(&mut warn)
            .map_err(|e| e.to_string());
        (s, String::from_utf8(warn).expect("utf-8"), cmd.args)
    }

    #[test]
    fn the_three_strategies() {
        assert_eq!(strategy(&[]).0, Ok(DryRunStrategy::None));
        assert_eq!(strategy(&["--dry-run=none"]).0, Ok(DryRunStrategy::None));
        assert_eq!(
            strategy(&["--dry-run=client"]).0,
            Ok(DryRunStrategy::Client)
        );
        assert_eq!(
            strategy(&["--dry-run=server"]).0,
            Ok(DryRunStrategy::Server)
        );
        assert_eq!(strategy(&["--dry-run=server"]).1, "");
    }

    #[test]
    fn bare_flag_means_client_with_a_warning_and_does_not_eat_the_next_word() {
        let (s, warn, args) = strategy(&["--dry-run", "client"]);
        assert_eq!(s, Ok(DryRunStrategy::Client));
        assert!(warn.starts_with('W'), "{warn}");
        assert!(
            warn.ends_with(
                " helpers.go:714] --dry-run is deprecated and can be replaced with --dry-run=client.\n"
            ),
            "{warn}"
        );
        assert_eq!(args, ["client"]);
    }

    #[test]
    fn booleans_are_deprecated_spellings() {
        let (s, warn, _) = strategy(&["--dry-run=true"]);
        assert_eq!(s, Ok(DryRunStrategy::Client));
        assert!(warn.starts_with('W'), "{warn}");
        assert!(
            warn.ends_with(" helpers.go:728] --dry-run=true is deprecated (boolean value) and can be replaced with --dry-run=client.\n"),
            "{warn}"
        );
        let (s, warn, _) = strategy(&["--dry-run=false"]);
        assert_eq!(s, Ok(DryRunStrategy::None));
        assert!(warn.ends_with("can be replaced with --dry-run=none.\n"));
    }

    #[test]
    fn unknown_values_get_kubectls_message() {
        assert_eq!(
            strategy(&["--dry-run=bogus"]).0,
            Err(
                "Invalid dry-run value (bogus). Must be \"none\", \"server\", or \"client\"."
                    .to_string()
            )
        );
    }

    #[test]
    fn suffixes() {
        assert_eq!(DryRunStrategy::None.operation_suffix(), "");
        assert_eq!(DryRunStrategy::Client.operation_suffix(), " (dry run)");
        assert_eq!(
            DryRunStrategy::Server.operation_suffix(),
            " (server dry run)"
        );
        assert!(!DryRunStrategy::Client.sends_requests());
    }
}
