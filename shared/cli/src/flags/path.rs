//! Path flags as pflag reads them. pflag takes any string for a path flag, the empty
//! one too (`--kubeconfig=`), and kubectl then treats the empty path as not given:
//! client-go's loading rules skip an empty `ExplicitPath`, its overrides merge no empty
//! file name over the kubeconfig's, cli-runtime keeps the default `--cache-dir` for an
//! empty one, and `IsFilenameSliceEmpty` counts an empty `-k` as none. clap's own
//! `PathBuf` parser refuses an empty value instead.

use std::path::{Path, PathBuf};

use clap::builder::{OsStringValueParser, TypedValueParser};

/// The value parser of a path flag: any value, the empty one included.
pub fn go_path() -> impl TypedValueParser<Value = PathBuf> {
    OsStringValueParser::new().map(PathBuf::from)
}

/// A path flag's value as kubectl uses it: `None` when absent or empty.
pub fn given_path(path: &Option<PathBuf>) -> Option<&Path> {
    path.as_deref().filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn parse(args: &[&str]) -> Option<PathBuf> {
        let cmd = Command::new("t").arg(
            Arg::new("kubeconfig")
                .long("kubeconfig")
                .value_parser(go_path()),
        );
        let matches = cmd
            .try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))
            .expect("parsed");
        matches.get_one::<PathBuf>("kubeconfig").cloned()
    }

    #[test]
    fn an_empty_path_is_taken_and_means_not_given() {
        let empty = parse(&["--kubeconfig="]);
        assert_eq!(empty, Some(PathBuf::new()));
        assert_eq!(given_path(&empty), None);
        let set = parse(&["--kubeconfig=/k"]);
        assert_eq!(given_path(&set), Some(Path::new("/k")));
        assert_eq!(given_path(&parse(&[])), None);
    }
}
