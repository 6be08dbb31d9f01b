//! pflag-style boolean flags: `--flag`, `--flag=true`, `--flag=false`, with Go's
//! `strconv.ParseBool` spellings. clap's plain switches reject a value, and scripts
//! written for kubectl pass `--attach=false` and `--quiet=true` all the time.
//!
//! Declare such a flag with
//! `#[arg(long, num_args = 0..=1, require_equals = true, default_value = "false",
//! default_missing_value = "true", value_parser = shared::flags::parse_go_bool)]`.

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
