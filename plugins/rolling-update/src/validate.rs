//! kubectl 1.17's `validateArguments`: which combinations of arguments are usage
//! errors, with its exact messages and order. Nothing here contacts the server.

/// The usage errors, in kubectl's order (empty when the arguments are fine).
pub fn validate_arguments(
    deployment_key: &str,
    filenames: &[String],
    image: &str,
    rollback: bool,
    args: &[String],
) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if deployment_key.is_empty() {
        errors.push("--deployment-label-key can not be empty");
    }
    if filenames.len() > 1 {
        errors.push("May only specify a single filename for new controller");
    }
    if !rollback {
        if filenames.is_empty() && image.is_empty() {
            errors.push("Must specify --filename or --image for new controller");
        } else if !filenames.is_empty() && !image.is_empty() {
            errors.push("--filename and --image can not both be specified");
        }
    } else if !filenames.is_empty() || !image.is_empty() {
        errors.push("Don't specify --filename or --image on rollback");
    }
    if args.is_empty() {
        errors.push("Must specify the controller to update");
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubectl 1.17's `TestValidateArgs`: key, filenames, image, rollback, args, and
    /// the errors, in order.
    type Row = (
        &'static str,
        &'static [&'static str],
        &'static str,
        bool,
        &'static [&'static str],
        &'static [&'static str],
    );

    const NO_FILE_OR_IMAGE: &str = "Must specify --filename or --image for new controller";
    const NO_CONTROLLER: &str = "Must specify the controller to update";
    const FILE_AND_IMAGE: &str = "--filename and --image can not both be specified";
    const EMPTY_KEY: &str = "--deployment-label-key can not be empty";
    const FILES: &str = "May only specify a single filename for new controller";
    const ON_ROLLBACK: &str = "Don't specify --filename or --image on rollback";

    const TABLE: &[Row] = &[
        (
            "deployment",
            &[],
            "",
            false,
            &[],
            &[NO_FILE_OR_IMAGE, NO_CONTROLLER],
        ),
        ("deployment", &[], "", false, &["foo"], &[NO_FILE_OR_IMAGE]),
        ("deployment", &["bar.yaml"], "", false, &["foo"], &[]),
        ("deployment", &[], "foo:v2", false, &["foo"], &[]),
        ("deployment", &[], "foo:v2", false, &["foo", "foo-v2"], &[]),
        (
            "deployment",
            &["bar.yaml"],
            "foo:v2",
            false,
            &["foo", "foo-v2"],
            &[FILE_AND_IMAGE],
        ),
        (
            "",
            &["a.yaml", "b.yaml"],
            "",
            false,
            &["foo"],
            &[EMPTY_KEY, FILES],
        ),
        ("deployment", &[], "", true, &["foo"], &[]),
        ("deployment", &[], "", true, &["foo", "foo-v2"], &[]),
        ("deployment", &[], "x", true, &["foo"], &[ON_ROLLBACK]),
        (
            "deployment",
            &["a"],
            "",
            true,
            &[],
            &[ON_ROLLBACK, NO_CONTROLLER],
        ),
        (
            "",
            &["a", "b"],
            "x",
            false,
            &[],
            &[EMPTY_KEY, FILES, FILE_AND_IMAGE, NO_CONTROLLER],
        ),
    ];

    fn owned(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kubectl_validate_args_table() {
        for &(key, files, image, rollback, args, want) in TABLE {
            assert_eq!(
                validate_arguments(key, &owned(files), image, rollback, &owned(args)),
                want,
                "{key:?} {files:?} {image:?} {rollback} {args:?}"
            );
        }
    }
}
