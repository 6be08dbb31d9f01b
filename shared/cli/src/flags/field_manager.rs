//! `--field-manager`, kubectl's `cmdutil.AddFieldManagerFlagVar`: the name server-side
//! field tracking records for the objects a command writes. Each command has its own
//! default (`kubectl-run`, `kubectl-create`), set with
//! [`FieldManagerFlags::default_manager`] on its clap command.

/// The `--field-manager` flag, to `#[command(flatten)]` into a command's arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FieldManagerFlags {
    /// The manager name.
    #[arg(
        long = "field-manager",
        value_name = "NAME",
        default_value = "kubectl",
        help = "Name of the manager used to track field ownership."
    )]
    pub field_manager: String,
}

impl FieldManagerFlags {
    /// Gives `cmd`'s `--field-manager` the command's own default, as kubectl passes
    /// it to `AddFieldManagerFlagVar` (shown by `--help`).
    pub fn default_manager(cmd: clap::Command, manager: &'static str) -> clap::Command {
        cmd.mut_arg("field_manager", |arg| arg.default_value(manager))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    #[derive(Parser, Debug)]
    struct Cmd {
        #[command(flatten)]
        manager: FieldManagerFlags,
    }

    fn parse(argv: &[&str]) -> String {
        let cmd = FieldManagerFlags::default_manager(Cmd::command(), "kubectl-run");
        let m = cmd
            .try_get_matches_from(std::iter::once("t").chain(argv.iter().copied()))
            .expect("parses");
        Cmd::from_arg_matches(&m)
            .expect("args")
            .manager
            .field_manager
    }

    #[test]
    fn the_commands_default_stands_until_given() {
        assert_eq!(parse(&[]), "kubectl-run");
        assert_eq!(parse(&["--field-manager=mine"]), "mine");
    }
}
