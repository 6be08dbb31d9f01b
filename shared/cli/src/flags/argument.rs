//! pflag's rule for a flag's argument: a flag that needs one takes the next word
//! whatever it is, a leading `-` included. `create -f -n c1` reads `-n` as the file
//! name (and then refuses `c1` as an unexpected argument), `--image --tty` reads
//! `--tty` as the image; clap would instead take `-n` for a flag and say that `-f`
//! has no argument.

/// Gives every flag of `cmd` that needs an argument pflag's rule. Flags whose argument
/// is optional (`--dry-run`, `--cascade`, the booleans of
/// [`super::go_bool_flags`]: an argument only after `=`) and positional arguments are
/// left as they are.
pub fn pflag_arguments(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        if arg.is_positional()
            || !arg.get_action().takes_values()
            || optional
            || arg.is_require_equals_set()
        {
            return arg;
        }
        arg.allow_hyphen_values(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    fn cmd() -> Command {
        pflag_arguments(super::super::go_bool_flags(
            Command::new("t")
                .arg(
                    Arg::new("filename")
                        .short('f')
                        .long("filename")
                        .action(ArgAction::Append),
                )
                .arg(Arg::new("namespace").short('n').long("namespace"))
                .arg(
                    Arg::new("tty")
                        .short('t')
                        .long("tty")
                        .action(ArgAction::SetTrue),
                )
                .arg(
                    Arg::new("dry-run")
                        .long("dry-run")
                        .num_args(0..=1)
                        .require_equals(true)
                        .default_missing_value("unchanged"),
                )
                .arg(Arg::new("args").num_args(0..)),
        ))
    }

    fn parse(args: &[&str]) -> clap::ArgMatches {
        cmd()
            .try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))
            .expect("parses")
    }

    fn values(m: &clap::ArgMatches, id: &str) -> Vec<String> {
        m.get_many::<String>(id)
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_flag_takes_the_next_word_even_with_a_dash() {
        let m = parse(&["-f", "-n", "c1"]);
        assert_eq!(values(&m, "filename"), ["-n"]);
        assert_eq!(values(&m, "namespace"), Vec::<String>::new());
        assert_eq!(values(&m, "args"), ["c1"]);
        let m = parse(&["--namespace", "--tty"]);
        assert_eq!(values(&m, "namespace"), ["--tty"]);
        assert_eq!(m.get_one::<bool>("tty"), Some(&false));
    }

    #[test]
    fn optional_arguments_and_switches_take_no_next_word() {
        let m = parse(&["--dry-run", "-t", "x"]);
        assert_eq!(values(&m, "dry-run"), ["unchanged"]);
        assert_eq!(m.get_one::<bool>("tty"), Some(&true));
        assert_eq!(values(&m, "args"), ["x"]);
    }

    #[test]
    fn a_flag_at_the_end_still_needs_its_argument() {
        let err = cmd()
            .try_get_matches_from(["t", "-f"])
            .expect_err("no argument");
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
    }
}
