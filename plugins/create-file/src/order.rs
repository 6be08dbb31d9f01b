//! Which objects are order barriers: kinds whose existence changes how the API server
//! admits objects created after them.
//!
//! kubectl creates one object at a time in input order, so a file may rely on a
//! LimitRange existing before the Pods after it (they get its defaults), a
//! ServiceAccount before the Pods naming it, a Role before a RoleBinding a non-admin
//! creates (RBAC's escalation check), and so on. create-file keeps that result: an
//! object of such a kind is created alone, after every object before it is done and
//! before any object after it is sent; between two barriers objects are created
//! concurrently, where order cannot change the result. (Namespaces and
//! CustomResourceDefinitions go before everything, see `create.rs`.)
//!
//! The list follows Helm's install order (`releaseutil.InstallOrder`) for the kinds
//! that act at admission, plus the admission plug-ins of the API server that read
//! other objects.

/// Whether an object of `group`/`kind` can change the admission of objects created
/// after it.
pub fn is_barrier(group: &str, kind: &str) -> bool {
    match group {
        "" => matches!(
            kind,
            // LimitRanger defaults and checks; ResourceQuota counts and refuses
            // (also `count/…` of any kind); ServiceAccount admission looks the account
            // up (and a token Secret needs its account).
            "LimitRange" | "ResourceQuota" | "ServiceAccount" | "Namespace"
        ),
        // Priority admission resolves `priorityClassName`.
        "scheduling.k8s.io" => kind == "PriorityClass",
        // A binding may only grant what exists and what its creator holds; a binding
        // gives its subject (maybe the user running the command) rights for what
        // follows.
        "rbac.authorization.k8s.io" => matches!(
            kind,
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
        ),
        // Webhooks admit, mutate or refuse everything after them.
        "admissionregistration.k8s.io" => matches!(
            kind,
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"
        ),
        "apiextensions.k8s.io" => kind == "CustomResourceDefinition",
        // PodSecurityPolicy admission (when enabled) picks and enforces a policy.
        "policy" => kind == "PodSecurityPolicy",
        // RuntimeClass admission sets Pod overhead and checks the class exists.
        "node.k8s.io" => kind == "RuntimeClass",
        // DefaultStorageClass admission fills in the default class of new claims.
        "storage.k8s.io" => kind == "StorageClass",
        // An APIService makes a group of resources served (or not).
        "apiregistration.k8s.io" => kind == "APIService",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_inputs_are_barriers() {
        for (group, kind) in [
            ("", "LimitRange"),
            ("", "ResourceQuota"),
            ("", "ServiceAccount"),
            ("scheduling.k8s.io", "PriorityClass"),
            ("rbac.authorization.k8s.io", "Role"),
            ("rbac.authorization.k8s.io", "ClusterRole"),
            ("rbac.authorization.k8s.io", "RoleBinding"),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
            ),
            ("policy", "PodSecurityPolicy"),
            ("node.k8s.io", "RuntimeClass"),
            ("storage.k8s.io", "StorageClass"),
        ] {
            assert!(is_barrier(group, kind), "{group}/{kind}");
        }
    }

    #[test]
    fn workloads_and_data_are_not() {
        for (group, kind) in [
            ("", "ConfigMap"),
            ("", "Secret"),
            ("", "Pod"),
            ("", "Service"),
            ("apps", "Deployment"),
            ("policy", "PodDisruptionBudget"),
            // Same kind name in another group: not the built-in one.
            ("example.com", "LimitRange"),
            ("example.com", "Role"),
        ] {
            assert!(!is_barrier(group, kind), "{group}/{kind}");
        }
    }
}
