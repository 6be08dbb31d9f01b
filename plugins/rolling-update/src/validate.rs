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

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kubectl_validate_args_table() {
        // (key, filenames, image, rollback, args) -> errors
        // (key, filenames, image, rollback, args) -> errors
        type Row<'a> = (
            &'a str,
            Vec<String>,
            &'a str,
            bool,
            Vec<String>,
            Vec<&'a str>,
        );
        let table: Vec<Row<'_>> = vec![
            (
                "deployment",
                v(&[]),
                "",
                false,
                v(&[]),
                vec![
                    "Must specify --filename or --image for new controller",
                    "Must specify the controller to update",
                ],
            ),
            (
                "deployment",
                v(&[]),
                "",
                false,
                v(&["foo"]),
                vec!["Must specify --filename or --image for new controller"],
            ),
            (
                "deployment",
                v(&["bar.yaml"]),
                "",
                false,
                v(&["foo"]),
                vec![],
            ),
            ("deployment", v(&[]), "foo:v2", false, v(&["foo"]), vec![]),
            (
                "deployment",
                v(&[]),
                "foo:v2",
                false,
                v(&["foo", "foo-v2"]),
                vec![],
            ),
            (
                "deployment",
                v(&["bar.yaml"]),
                "foo:v2",
                false,
                v(&["foo", "foo-v2"]),
                vec!["--filename and --image can not both be specified"],
            ),
            (
                "",
                v(&["a.yaml", "b.yaml"]),
                "",
                false,
                v(&["foo"]),
                vec![
                    "--deployment-label-key can not be empty",
                    "May only specify a single filename for new controller",
                ],
            ),
            ("deployment", v(&[]), "", true, v(&["foo"]), vec![]),
            (
                "deployment",
                v(&[]),
                "",
                true,
                v(&["foo", "foo-v2"]),
                vec![],
            ),
            (
                "deployment",
                v(&[]),
                "x",
                true,
                v(&["foo"]),
                vec!["Don't specify --filename or --image on rollback"],
            ),
            (
                "deployment",
                v(&["a"]),
                "",
                true,
                v(&[]),
                vec![
                    "Don't specify --filename or --image on rollback",
                    "Must specify the controller to update",
                ],
            ),
            (
                "",
                v(&["a", "b"]),
                "x",
                false,
                v(&[]),
                vec![
                    "--deployment-label-key can not be empty",
                    "May only specify a single filename for new controller",
                    "--filename and --image can not both be specified",
                    "Must specify the controller to update",
                ],
            ),
        ];
        for (key, files, image, rollback, args, want) in table {
            assert_eq!(
                validate_arguments(key, &files, image, rollback, &args),
                want,
                "{key:?} {files:?} {image:?} {rollback} {args:?}"
            );
        }
    }
}
