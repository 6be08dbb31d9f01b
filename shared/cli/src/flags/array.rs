//! pflag's `stringArray` flags as kubectl reads them back with `GetStringArray`
//! (`run`'s `--annotations` and `--env`; not `--as-group`, which cli-runtime binds to
//! its variable and reads as set, a lone empty group included). `GetStringArray` does not return the values set: it formats them
//! as one CSV line (`[a,b]`, the flag's `String()`) and reads that line again, and a
//! line that is empty is no value at all. So `--env=` alone is no `--env` (kubectl
//! runs the pod), while `--env= --env=A` is two values, the first empty (refused).
//! Any other list survives the round trip: Go's CSV writer quotes every value that
//! holds a comma, a quote, a line break or a leading space.

/// pflag's `stringSlice` (`create -f`): each value is one CSV line of values, and an
/// empty one is none (`-f a.yaml --filename=` creates from `a.yaml`), where `a,,b`
/// holds an empty name. Split on commas: Go's CSV quoting (`-f '"a,b"'`) is not
/// read.
pub fn get_string_slice(values: Vec<String>) -> Vec<String> {
    values
        .iter()
        .filter(|v| !v.is_empty())
        .flat_map(|v| v.split(','))
        .map(String::from)
        .collect()
}

/// The values of a repeatable flag as pflag's `GetStringArray` returns them.
pub fn get_string_array(values: Vec<String>) -> Vec<String> {
    match values.as_slice() {
        [only] if only.is_empty() => Vec::new(),
        _ => values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(values: &[&str]) -> Vec<String> {
        get_string_array(values.iter().map(|v| v.to_string()).collect())
    }

    #[test]
    fn a_lone_empty_value_is_no_value() {
        assert!(array(&[""]).is_empty());
        assert!(array(&[]).is_empty());
    }

    #[test]
    fn a_slice_splits_on_commas_and_an_empty_value_adds_none() {
        let slice = |v: &[&str]| get_string_slice(v.iter().map(|v| v.to_string()).collect());
        assert_eq!(slice(&["a,b", "", "c"]), ["a", "b", "c"]);
        assert_eq!(slice(&["a,,b"]), ["a", "", "b"]);
        assert!(slice(&[""]).is_empty());
    }

    #[test]
    fn an_empty_value_beside_others_is_kept() {
        assert_eq!(array(&["", "A=1"]), ["", "A=1"]);
        assert_eq!(array(&["A=1", ""]), ["A=1", ""]);
        assert_eq!(array(&["a,b", " c"]), ["a,b", " c"]);
    }
}
