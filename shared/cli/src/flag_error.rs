//! Command-line errors in pflag's words (cobra's parser, which kubectl uses), so that
//! a typo reads the same under `kubectl create-file` as under `kubectl create`, and
//! scripts that match on the text keep working:
//!
//! ```text
//! error: unknown flag: --foo
//! error: unknown shorthand flag: 'Z' in -Zx
//! error: flag needs an argument: 'f' in -f
//! error: flag needs an argument: --filename
//! error: invalid argument "yes" for "-R, --recursive" flag: strconv.ParseBool: parsing "yes": invalid syntax
//! See 'kubectl create-file --help' for usage.
//! ```
//!
//! The prefix is kubectl 1.37's `error:` (its `CheckErr`); kubectl 1.32 let cobra print
//! `Error:`. The plugins follow the current kubectl where the two differ.
//!
//! clap reports an argument by its definition (`--filename <FILENAME>`), not by how
//! it was typed; pflag quotes the typed spelling, so the raw arguments are consulted.

use std::error::Error as _;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Command;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Handles a clap parse error: `--help`/`--version` output exits 0; anything else
/// prints pflag's message and kubectl's usage hint and exits 1.
///
/// `command` is the user-facing name (`kubectl run-pod`), `cmd` the clap command that
/// failed to parse `argv` (the whole `std::env::args_os()`).
pub fn flag_error(command: &str, cmd: &Command, err: &clap::Error, argv: &[OsString]) -> ExitCode {
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(
        std::io::stderr(),
        "error: {}\nSee '{command} --help' for usage.",
        flag_error_message(cmd, err, argv)
    );
    ExitCode::from(1)
}

/// pflag's message (without the `error: ` prefix) for a clap parse error.
pub fn flag_error_message(cmd: &Command, err: &clap::Error, argv: &[OsString]) -> String {
    let context = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.first().cloned().unwrap_or_default(),
        _ => String::new(),
    };
    // Everything after the program name, up to `--` (after it nothing is a flag).
    let typed: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    let invalid_arg = context(ContextKind::InvalidArg);
    match err.kind() {
        // clap also reports a surplus positional argument this way; cobra leaves that
        // to each command's own check, so clap's words stay.
        ErrorKind::UnknownArgument if !invalid_arg.starts_with('-') => first_line(err),
        ErrorKind::UnknownArgument => match invalid_arg.strip_prefix("--") {
            Some(long) => format!("unknown flag: --{}", long.split('=').next().unwrap_or(long)),
            None => {
                let c = invalid_arg
                    .trim_start_matches('-')
                    .chars()
                    .next()
                    .unwrap_or('-');
                format!(
                    "unknown shorthand flag: '{c}' in -{}",
                    shorthands_from(&typed, c).unwrap_or_else(|| c.to_string())
                )
            }
        },
        ErrorKind::InvalidValue if context(ContextKind::InvalidValue).is_empty() => {
            let (long, short) = names(cmd, &invalid_arg);
            // The flag is the last thing typed: pflag says it the way it was typed.
            match typed.last() {
                Some(last) if !last.starts_with("--") && short.is_some() => {
                    let c = short.unwrap_or('-');
                    format!(
                        "flag needs an argument: '{c}' in -{}",
                        shorthands_from(&typed, c).unwrap_or_else(|| c.to_string())
                    )
                }
                _ => format!("flag needs an argument: --{long}"),
            }
        }
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let (long, short) = names(cmd, &invalid_arg);
            let flag = match short {
                Some(c) => format!("-{c}, --{long}"),
                None => format!("--{long}"),
            };
            let value = context(ContextKind::InvalidValue);
            let reason = err
                .source()
                .map(|s| s.to_string())
                .unwrap_or_else(|| first_line(err));
            format!("invalid argument {value:?} for {flag:?} flag: {reason}")
        }
        _ => first_line(err),
    }
}

/// The long name and shorthand of the flag clap names as `--labels <LABELS>`,
/// `--rm[=<RM>]` or `-l <LABELS>`.
fn names(cmd: &Command, invalid_arg: &str) -> (String, Option<char>) {
    let word = invalid_arg
        .split([' ', '=', '['])
        .next()
        .unwrap_or(invalid_arg);
    let arg = match word.strip_prefix("--") {
        Some(long) => cmd.get_arguments().find(|a| a.get_long() == Some(long)),
        None => {
            let c = word.trim_start_matches('-').chars().next();
            cmd.get_arguments()
                .find(|a| a.get_short().is_some() && a.get_short() == c)
        }
    };
    match arg {
        Some(arg) => (
            arg.get_long()
                .map(str::to_string)
                .unwrap_or_else(|| arg.get_id().to_string()),
            arg.get_short(),
        ),
        None => (word.trim_start_matches('-').to_string(), None),
    }
}

/// pflag's `shorthands` in its messages: the rest of the typed group of shorthand
/// flags from the letter `c` on (`-qZx` → `Zx`), from the last group holding `c`.
fn shorthands_from(typed: &[String], c: char) -> Option<String> {
    typed
        .iter()
        .rev()
        .filter(|a| a.starts_with('-') && !a.starts_with("--") && a.len() > 1)
        .find_map(|a| a[1..].find(c).map(|i| a[1 + i..].to_string()))
}

fn first_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction};

    fn cmd() -> Command {
        crate::flags::go_bool_flags(
            Command::new("t")
                .arg(Arg::new("filename").short('f').long("filename"))
                .arg(Arg::new("labels").short('l').long("labels"))
                .arg(Arg::new("image").long("image"))
                .arg(
                    Arg::new("recursive")
                        .short('R')
                        .long("recursive")
                        .action(ArgAction::SetTrue),
                )
                .arg(Arg::new("edit").long("edit").action(ArgAction::SetTrue))
                .arg(
                    Arg::new("quiet")
                        .short('q')
                        .long("quiet")
                        .action(ArgAction::SetTrue),
                )
                .arg(Arg::new("name")),
        )
    }

    fn message(args: &[&str]) -> String {
        let argv: Vec<OsString> = std::iter::once("t")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let err = cmd()
            .try_get_matches_from(&argv)
            .expect_err("the command line is wrong");
        flag_error_message(&cmd(), &err, &argv)
    }

    /// Each expected line is what `kubectl create` (cobra/pflag) prints after `error: `.
    #[test]
    fn messages_are_pflags() {
        for (args, want) in [
            (&["--foo"][..], "unknown flag: --foo"),
            (&["--foo=bar"], "unknown flag: --foo"),
            (&["-Zx"], "unknown shorthand flag: 'Z' in -Zx"),
            (&["-qZx"], "unknown shorthand flag: 'Z' in -Zx"),
            (&["-f"], "flag needs an argument: 'f' in -f"),
            (&["--filename"], "flag needs an argument: --filename"),
            (&["x", "-l"], "flag needs an argument: 'l' in -l"),
            (&["--image"], "flag needs an argument: --image"),
            (
                &["-R=yes"],
                "invalid argument \"yes\" for \"-R, --recursive\" flag: strconv.ParseBool: parsing \"yes\": invalid syntax",
            ),
            (
                &["--recursive=yes"],
                "invalid argument \"yes\" for \"-R, --recursive\" flag: strconv.ParseBool: parsing \"yes\": invalid syntax",
            ),
            (
                &["--edit=2"],
                "invalid argument \"2\" for \"--edit\" flag: strconv.ParseBool: parsing \"2\": invalid syntax",
            ),
        ] {
            assert_eq!(message(args), want, "for {args:?}");
        }
    }

    #[test]
    fn other_errors_keep_claps_first_line() {
        let m = message(&["a", "b"]);
        assert!(m.starts_with("unexpected argument 'b'"), "{m}");
    }
}
