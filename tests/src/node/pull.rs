//! Image pulls that fail, as a kubelet reports them: the node's rule for an image
//! that does not exist, the pull error in containerd's words, and the kubelet's
//! alternation of `ErrImagePull` (a pull just failed) and `ImagePullBackOff` (the
//! next pull waits), with a doubling back-off.
//!
//! **The rule:** an image whose registry host ends in `.invalid` does not exist
//! (RFC 2606 reserves the name: it never resolves, so a real runtime fails the same
//! way, in the same words). A test makes an image "missing" by naming it so
//! (`registry.invalid/web:2`), and "fixes" it by using another image, as a user
//! fixes a typo. Every other image is present.

use std::time::Duration;

use super::backoff::RestartBackoff;

/// The top-level domain of registries that do not exist.
pub const MISSING_REGISTRY_TLD: &str = ".invalid";

/// The registry host of an image reference, if it names one (Docker's rule: the
/// first path component, when it holds a `.` or a `:` or is `localhost`).
fn registry_host(image: &str) -> Option<&str> {
    let (first, _) = image.split_once('/')?;
    (first.contains('.') || first.contains(':') || first == "localhost").then_some(first)
}

/// Whether the node treats `image` as one that does not exist.
pub fn missing(image: &str) -> bool {
    registry_host(image).is_some_and(|host| {
        let host = host.split(':').next().unwrap_or(host);
        host.ends_with(MISSING_REGISTRY_TLD)
    })
}

/// The reference the kubelet pulls: `:latest` added when there is no tag or digest.
fn with_default_tag(image: &str) -> String {
    let name = image.rsplit('/').next().unwrap_or(image);
    if image.contains('@') || name.contains(':') {
        image.to_owned()
    } else {
        format!("{image}:latest")
    }
}

/// The runtime's error for a pull from a registry that does not resolve, as
/// containerd words it through CRI (the kubelet puts it in the container's waiting
/// message and in its `Failed` event).
pub fn pull_error(image: &str) -> String {
    let reference = with_default_tag(image);
    let host = registry_host(&reference).unwrap_or_default();
    let (path, tag) = reference[host.len() + 1..]
        .rsplit_once(':')
        .unwrap_or((&reference[host.len() + 1..], "latest"));
    let bare_host = host.split(':').next().unwrap_or(host);
    format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{reference}\": failed to resolve reference \"{reference}\": failed to do request: Head \"https://{host}/v2/{path}/manifests/{tag}\": dial tcp: lookup {bare_host}: no such host"
    )
}

/// The kubelet's back-off message, which wraps the last pull error (1.32+); the
/// image as the pod spec writes it.
pub fn back_off_message(image: &str) -> String {
    format!(
        "Back-off pulling image \"{image}\": ErrImagePull: {}",
        pull_error(image)
    )
}

/// Where a container whose image is missing is, `elapsed` after the pod started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullState {
    /// `ErrImagePull` or `ImagePullBackOff`.
    pub reason: &'static str,
    /// Which pull attempt (0-based) this is, or follows.
    pub attempt: u32,
    /// When the state changes next.
    pub next_change: Duration,
}

/// A pull fails at once; `ErrImagePull` shows until the kubelet's next sync
/// (`HOLD`), then `ImagePullBackOff` for the back-off of that attempt (doubling,
/// capped: the kubelet's 10 s … 300 s, at the node's faster scale), then the next
/// attempt.
pub fn pull_state(backoff: &RestartBackoff, elapsed: Duration) -> PullState {
    const HOLD: Duration = Duration::from_secs(1);
    let mut start = Duration::ZERO;
    let mut attempt = 0u32;
    loop {
        let backing_off_at = start + HOLD;
        if elapsed < backing_off_at {
            return PullState {
                reason: "ErrImagePull",
                attempt,
                next_change: backing_off_at,
            };
        }
        let next = backing_off_at + backoff.delay(attempt);
        if elapsed < next {
            return PullState {
                reason: "ImagePullBackOff",
                attempt,
                next_change: next,
            };
        }
        start = next;
        attempt = attempt.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reserved_registries_are_missing() {
        for image in [
            "registry.invalid/web:2",
            "registry.invalid:5000/team/web",
            "x.invalid/web@sha256:00",
        ] {
            assert!(missing(image), "{image}");
        }
        for image in [
            "nginx",
            "nginx:1.25",
            "docker.io/library/nginx",
            "invalid/web",
            "localhost/x",
        ] {
            assert!(!missing(image), "{image}");
        }
    }

    #[test]
    fn the_error_is_containerds() {
        assert_eq!(
            pull_error("registry.invalid/web:2"),
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.invalid/web:2\": failed to resolve reference \"registry.invalid/web:2\": failed to do request: Head \"https://registry.invalid/v2/web/manifests/2\": dial tcp: lookup registry.invalid: no such host"
        );
        assert!(pull_error("registry.invalid:5000/a/b").contains(
            "Head \"https://registry.invalid:5000/v2/a/b/manifests/latest\": dial tcp: lookup registry.invalid: no such host"
        ));
        assert!(back_off_message("registry.invalid/web").starts_with(
            "Back-off pulling image \"registry.invalid/web\": ErrImagePull: rpc error:"
        ));
    }

    #[test]
    fn pulls_alternate_with_a_doubling_back_off() {
        let backoff = RestartBackoff {
            initial: Duration::from_millis(200),
            max: Duration::from_millis(500),
        };
        let ms = Duration::from_millis;
        let at = |t| pull_state(&backoff, ms(t));
        assert_eq!(
            (at(0).reason, at(0).attempt, at(0).next_change),
            ("ErrImagePull", 0, ms(1000))
        );
        assert_eq!(
            (at(1000).reason, at(1000).next_change),
            ("ImagePullBackOff", ms(1200))
        );
        assert_eq!((at(1200).reason, at(1200).attempt), ("ErrImagePull", 1));
        // Attempt 1 backs off 400 ms, attempt 2 is capped at 500 ms.
        assert_eq!(at(2200).next_change, ms(2600));
        assert_eq!(at(3600).next_change, ms(4100));
    }
}
