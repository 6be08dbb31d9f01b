//! Image reference validation: the grammar of distribution/reference's
//! `ReferenceRegexp`, which `kubectl run` matches `--image` against.
//!
//! Hand-written as a regular expression rather than taken from a crate because kubectl's
//! check is the bare regular expression (no length limit, no normalisation to
//! `docker.io/library/…`), and the crates that parse references either add the 255
//! character limit (`container_image_dist_ref`) or normalise and reject IPv6 hosts
//! (`oci-spec`), both unlike kubectl, so the check is written here.
//!
//! Matched with `regex-lite` rather than `regex` (binary size): run-pod
//! matches one reference per command, so `regex`'s faster searches buy nothing, and the
//! grammar needs only the RE2 syntax both crates share (ASCII classes, bounded
//! repetition, anchors), none of the Unicode classes `regex-lite` leaves out.

use std::sync::LazyLock;

use regex_lite::Regex;

/// The anchored pattern, assembled from the named pieces of distribution's grammar.
/// Go's `\w` is ASCII-only, hence the explicit classes.
static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    let alpha_numeric = "[a-z0-9]+";
    let separator = "(?:[._]|__|[-]+)";
    let path_component = format!("{alpha_numeric}(?:{separator}{alpha_numeric})*");
    let domain_name_component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
    let ipv6_address = r"\[(?:[a-fA-F0-9:]+)\]";
    let domain_name = format!(r"{domain_name_component}(?:\.{domain_name_component})*");
    let host = format!("(?:{domain_name}|{ipv6_address})");
    let domain_and_port = format!("{host}(?::[0-9]+)?");
    let tag = "[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
    let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
    let remote_name = format!("{path_component}(?:/{path_component})*");
    let name = format!("(?:{domain_and_port}/)?{remote_name}");
    let pattern = format!("^{name}(?::{tag})?(?:@{digest})?$");
    // The pattern is a constant of this file; a failure here is a programming error
    // caught by the unit tests, never user input.
    #[allow(clippy::unwrap_used)]
    Regex::new(&pattern).unwrap()
});

/// Whether `image` is a valid reference (`nginx`, `ghcr.io/o/app:v1@sha256:…`).
pub fn is_valid_image_reference(image: &str) -> bool {
    REFERENCE.is_match(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_distribution_accepts() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for ok in [
            "nginx",
            "nginx:1.27",
            "localhost/foo",
            "localhost:5000/foo:bar",
            "registry:5000/team/app:v1.2.3",
            "UPPER/case",
            "[::1]:5000/foo",
            "foo__bar",
            "foo-bar--baz",
            "a.b_c/d",
            &format!("ghcr.io/o/a:v1@{digest}"),
            &format!("busybox@{digest}"),
            &"a".repeat(300),
        ] {
            assert!(is_valid_image_reference(ok), "{ok} should be valid");
        }
    }

    #[test]
    fn rejects_what_distribution_rejects() {
        for bad in [
            "",
            "InvalidImageName",
            "Nginx",
            "nginx:",
            "a//b",
            "nginx@sha256:abc",
            "foo___bar",
            "-bad",
            "nginx:-tag",
            "nginx latest",
            "ngïnx",
            &format!("nginx:{}", "t".repeat(129)),
        ] {
            assert!(!is_valid_image_reference(bad), "{bad} should be invalid");
        }
    }

    /// The pattern's constructs whose reading could differ between engines, each on
    /// both sides of its edge: the anchors (end of text only, not before a final line
    /// feed, as Go's `$`), the bounded repetitions, `-` first or last in a class, and the
    /// bracketed IPv6 host. Each case agreed with `regex` when the check moved to
    /// `regex-lite`.
    #[test]
    fn each_construct_on_both_sides_of_its_edge() {
        let hex = |n: usize| {
            "0123456789abcdefABCDEF"
                .chars()
                .cycle()
                .take(n)
                .collect::<String>()
        };
        let valid = [
            format!("busybox@sha256:{}", hex(32)),
            format!("busybox@sha256:{}", hex(128)),
            format!("busybox@a+b.c-d_E1:{}", hex(32)),
            format!("nginx:{}", "t".repeat(128)),
            "nginx:v1.0-rc_1".to_string(),
            "my-registry.example-1.io:443/team/app".to_string(),
            "a---b".to_string(),
            "[::1]/foo".to_string(),
            "[FE80::a]:5000/foo".to_string(),
        ];
        for ok in &valid {
            assert!(is_valid_image_reference(ok), "{ok:?} should be valid");
        }
        let invalid = [
            format!("busybox@sha256:{}", hex(31)),
            format!("busybox@sha256-:{}", hex(32)),
            format!("busybox@-sha256:{}", hex(32)),
            "nginx\n".to_string(),
            "\nnginx".to_string(),
            "nginx\r\n".to_string(),
            "nginx:-".to_string(),
            "a-.io/b".to_string(),
            "-a.io/b".to_string(),
            "a-".to_string(),
            "[]/foo".to_string(),
            "[::g]/foo".to_string(),
            "[::1]".to_string(),
            "[::1]:5000".to_string(),
            "::1/foo".to_string(),
        ];
        for bad in &invalid {
            assert!(!is_valid_image_reference(bad), "{bad:?} should be invalid");
        }
    }
}
