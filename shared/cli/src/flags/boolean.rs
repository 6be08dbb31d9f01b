//! pflag-style boolean flags: `--flag`, `--flag=true`, `--flag=false`, with Go's
//! `strconv.ParseBool` spellings. clap's plain switches reject a value, and scripts
//! written for kubectl pass `--attach=false` and `--quiet=true` all the time.
//!
//! Declare such a flag as a plain switch (`#[arg(long)] quiet: bool`) and build the
//! command with [`go_bool_flags`], which gives every switch pflag's syntax; a boolean
//! whose default is `true` (`--validate`) says so with `default_value = "true"`.

/// Gives every plain switch of `cmd` (clap's `SetTrue`, what `#[arg(long)] x: bool`
/// derives) pflag's boolean syntax: `--x`, `--x=true`, `--x=false`, `-x=0`; a value
/// must follow `=`, so `--x false` stays a switch and an argument, as in pflag.
///
/// Done on the built command rather than per field because clap's derive has no
/// attribute presets, and six attributes on every boolean is how flags drift apart.
/// `--help` is left as it is: it is handled before anything else.
pub fn go_bool_flags(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if !matches!(arg.get_action(), clap::ArgAction::SetTrue) || arg.get_id() == "help" {
            return arg;
        }
        // pflag lets a flag repeat, the last one winning (`--rm --rm=false`).
        let id = arg.get_id().clone();
        // A declared default (`true`) stands; clap's own for a switch is `false`.
        let default = arg
            .get_default_values()
            .first()
            .cloned()
            .unwrap_or_else(|| "false".into());
        arg.action(clap::ArgAction::Set)
            .overrides_with(id)
            .num_args(0..=1)
            .require_equals(true)
            .default_value(default)
            .default_missing_value("true")
            .value_parser(parse_go_bool)
    })
}

/// Go's `strconv.ParseBool`, with its error text.
pub fn parse_go_bool(value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        other => Err(format!(
            "strconv.ParseBool: parsing {other:?}: invalid syntax"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    #[derive(clap::Parser, Debug)]
    struct Switches {
        #[arg(short = 'q', long)]
        quiet: bool,
        #[arg(long)]
        rm: bool,
        #[arg(long, default_value = "true")]
        validate: bool,
        #[arg(long, default_value = "x")]
        name: String,
        rest: Vec<String>,
    }

    fn parse(argv: &[&str]) -> Result<Switches, clap::Error> {
        let cmd = go_bool_flags(Switches::command());
        let m = cmd.try_get_matches_from(std::iter::once("t").chain(argv.iter().copied()))?;
        Switches::from_arg_matches(&m)
    }

    #[test]
    fn switches_take_go_booleans_after_equals() {
        let s = parse(&[]).unwrap();
        assert!(!s.quiet && !s.rm);
        let s = parse(&["--quiet", "--rm=true"]).unwrap();
        assert!(s.quiet && s.rm);
        let s = parse(&["--quiet=false", "--rm=F", "-q=0"]).unwrap();
        assert!(!s.quiet && !s.rm);
        let s = parse(&["-q", "--rm=T"]).unwrap();
        assert!(s.quiet && s.rm);
        let s = parse(&["--rm", "--rm=false", "-q=false", "-q"]).unwrap();
        assert!(s.quiet && !s.rm, "the last one wins");
        // A value must follow `=`: the next word is an argument, as with pflag.
        let s = parse(&["--rm", "false"]).unwrap();
        assert!(s.rm);
        assert_eq!(s.rest, ["false"]);
        assert_eq!(s.name, "x");
    }

    #[test]
    fn a_declared_true_default_stands() {
        assert!(parse(&[]).unwrap().validate);
        assert!(!parse(&["--validate=false"]).unwrap().validate);
        assert!(parse(&["--validate=false", "--validate"]).unwrap().validate);
    }

    #[test]
    fn bad_booleans_get_go_error_text() {
        let err = parse(&["--rm=yes"]).unwrap_err().to_string();
        assert!(
            err.contains("strconv.ParseBool: parsing \"yes\": invalid syntax"),
            "{err}"
        );
    }

    #[test]
    fn the_command_stays_well_formed() {
        go_bool_flags(Switches::command()).debug_assert();
    }

    #[test]
    fn go_spellings() {
        for t in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_go_bool(t), Ok(true));
        }
        for f in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_go_bool(f), Ok(false));
        }
        assert_eq!(
            parse_go_bool("maybe"),
            Err("strconv.ParseBool: parsing \"maybe\": invalid syntax".into())
        );
    }
}
