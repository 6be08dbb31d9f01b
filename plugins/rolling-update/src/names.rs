//! The names an update leaves in the cluster: the four `kubectl.kubernetes.io/`
//! annotations, the source id, the deployment hash and the generated RC name.
//!
//! These strings are the compatibility contract with kubectl 1.17: an update started
//! by one tool is resumed or rolled back by the other through them.

use crate::model::ReplicationController;
use md5::{Digest, Md5};

/// On the new RC: `<oldName>:<oldUID>`, the RC this one replaces.
pub const SOURCE_ID_ANNOTATION: &str = "kubectl.kubernetes.io/update-source-id";
/// On the new RC: the replica count it should end with.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "kubectl.kubernetes.io/desired-replicas";
/// On the old RC: its replica count before the update (what a rollback restores).
pub const ORIGINAL_REPLICAS_ANNOTATION: &str = "kubectl.kubernetes.io/original-replicas";
/// On the old RC: the name of the RC the `--image` path is moving to.
pub const NEXT_CONTROLLER_ANNOTATION: &str = "kubectl.kubernetes.io/next-controller-id";

/// The default `--deployment-label-key`.
pub const DEFAULT_DEPLOYMENT_KEY: &str = "deployment";

/// `<name>:<uid>`, the value of [`SOURCE_ID_ANNOTATION`].
pub fn source_id(rc: &ReplicationController) -> String {
    format!(
        "{}:{}",
        rc.metadata.name.as_deref().unwrap_or_default(),
        rc.metadata.uid.as_deref().unwrap_or_default()
    )
}

/// Whether a source-id annotation value names `old_name` as its source.
///
/// 1.17 matched a bare string prefix, so `foo` also matched `foobar:…` (one of the
/// README's deliberate differences); matching up to the `:` keeps every value 1.17
/// wrote recognisable while no longer confusing `foo` with `foobar`.
pub fn source_id_names(value: &str, old_name: &str) -> bool {
    value
        .strip_prefix(old_name)
        .is_some_and(|rest| rest.starts_with(':'))
}

/// 32 lowercase hex digits of the MD5 of the RC's JSON encoding (kubectl's
/// `util.HashObject`).
///
/// The JSON is this plugin's encoding of the RC (`model`: keys in order, every member
/// the server sent), not Go's codec, so for the same object the digest differs from
/// the one 1.17 computes. Nothing depends on equality: the
/// encoding includes `resourceVersion` and `uid`, so the value was unique per run
/// in 1.17 as well; only its shape (and the `-orig` suffix for the old RC) matters.
pub fn hash_object(rc: &ReplicationController) -> String {
    // Serialising the model cannot fail (no maps with non-string keys); an empty
    // input still yields a valid, if constant, digest.
    let json = serde_json::to_vec(rc).unwrap_or_default();
    let digest = Md5::digest(&json);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The new RC's name: the given one, else `<oldName>-<hash>`.
pub fn new_controller_name(old_name: &str, given: &str, hash: &str) -> String {
    if given.is_empty() {
        format!("{old_name}-{hash}")
    } else {
        given.to_string()
    }
}

/// kubectl's `findNewName`: the second argument, else the old RC's
/// `next-controller-id` annotation, else empty.
pub fn find_new_name(args: &[String], old: &ReplicationController) -> String {
    if let Some(name) = args.get(1) {
        return name.clone();
    }
    annotation(old, NEXT_CONTROLLER_ANNOTATION)
        .unwrap_or_default()
        .to_string()
}

/// An annotation's value, if present.
pub fn annotation<'a>(rc: &'a ReplicationController, key: &str) -> Option<&'a str> {
    rc.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// Sets an annotation, creating the map when needed.
pub fn set_annotation(rc: &mut ReplicationController, key: &str, value: impl Into<String>) {
    rc.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(key.to_string(), value.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    fn rc(name: &str, uid: &str) -> ReplicationController {
        ReplicationController {
            metadata: ObjectMeta {
                name: Some(name.into()),
                uid: Some(uid.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn source_ids() {
        assert_eq!(source_id(&rc("foo-v1", "7764ae47")), "foo-v1:7764ae47");
        let table = [
            ("foo:123", "foo", true),
            ("foo:", "foo", true),
            ("foobar:123", "foo", false),
            ("bar:1234", "foo", false),
            ("foo", "foo", false),
            ("", "foo", false),
        ];
        for (value, name, want) in table {
            assert_eq!(source_id_names(value, name), want, "{value} vs {name}");
        }
    }

    #[test]
    fn hashes_are_md5_hex_and_change_with_the_object() {
        let a = hash_object(&rc("foo", "1"));
        let b = hash_object(&rc("foo", "2"));
        assert_eq!(a.len(), 32);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
        assert_eq!(a, hash_object(&rc("foo", "1")), "deterministic");
        // The digest is MD5 of the JSON text.
        let json = serde_json::to_vec(&rc("foo", "1")).unwrap();
        let want: String = Md5::digest(&json)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(a, want);
    }

    #[test]
    fn names() {
        assert_eq!(new_controller_name("foo", "", "abc"), "foo-abc");
        assert_eq!(new_controller_name("foo", "foo-v2", "abc"), "foo-v2");
        let mut old = rc("foo", "1");
        assert_eq!(find_new_name(&["foo".into()], &old), "");
        set_annotation(&mut old, NEXT_CONTROLLER_ANNOTATION, "foo-next");
        assert_eq!(find_new_name(&["foo".into()], &old), "foo-next");
        assert_eq!(
            find_new_name(&["foo".into(), "foo-v2".into()], &old),
            "foo-v2"
        );
    }
}
