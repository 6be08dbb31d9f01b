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
//! [`run_ordered`] is that schedule, apart from what is run.
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

/// Runs `jobs` with at most `concurrency` in flight, except that a job for which
/// `is_barrier` holds waits until every earlier job is done and runs alone; `done`
/// gets each output as it finishes (an error stops the run). Jobs are taken from the
/// iterator only as they are started, so a lazy input stays lazy.
pub async fn run_ordered<J, T, Fut>(
    jobs: impl Iterator<Item = J>,
    concurrency: usize,
    is_barrier: impl Fn(&J) -> bool,
    run: impl Fn(J) -> Fut,
    mut done: impl FnMut(T) -> anyhow::Result<()>,
) -> anyhow::Result<()>
where
    Fut: Future<Output = T>,
{
    use futures::StreamExt as _;
    let concurrency = concurrency.max(1);
    let mut jobs = jobs.fuse();
    let mut in_flight = futures::stream::FuturesUnordered::new();
    loop {
        let mut barrier = None;
        while in_flight.len() < concurrency {
            match jobs.next() {
                None => break,
                Some(job) if is_barrier(&job) => {
                    barrier = Some(job);
                    break;
                }
                Some(job) => in_flight.push(run(job)),
            }
        }
        if let Some(job) = barrier {
            while let Some(output) = in_flight.next().await {
                done(output)?;
            }
            done(run(job).await)?;
            continue;
        }
        match in_flight.next().await {
            Some(output) => done(output)?,
            // Nothing in flight and nothing started: the input is exhausted.
            None => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs 0..30 with barriers at 7 and 8 (back to back) and 20: what ran when.
    #[tokio::test]
    async fn barriers_wait_for_everything_before_and_hold_everything_after() {
        use std::cell::RefCell;
        let barriers = [7, 8, 20];
        let events = RefCell::new(Vec::new());
        let in_flight = RefCell::new((0usize, 0usize));
        let mut finished = Vec::new();
        run_ordered(
            0..30usize,
            4,
            |j| barriers.contains(j),
            |j| {
                let (events, in_flight) = (&events, &in_flight);
                async move {
                    events.borrow_mut().push(("start", j));
                    {
                        let mut f = in_flight.borrow_mut();
                        f.0 += 1;
                        f.1 = f.1.max(f.0);
                    }
                    // Later jobs finish sooner, so completion order differs from input.
                    for _ in 0..(30 - j) % 5 {
                        tokio::task::yield_now().await;
                    }
                    in_flight.borrow_mut().0 -= 1;
                    events.borrow_mut().push(("end", j));
                    j
                }
            },
            |j| {
                finished.push(j);
                Ok(())
            },
        )
        .await
        .expect("run");
        finished.sort_unstable();
        assert_eq!(finished, (0..30).collect::<Vec<_>>());
        let events = events.into_inner();
        let at = |what: &str, j: usize| events.iter().position(|e| *e == (what, j)).expect("event");
        for b in barriers {
            for j in 0..30 {
                if j < b {
                    assert!(at("end", j) < at("start", b), "{j} before barrier {b}");
                } else if j > b {
                    assert!(at("start", j) > at("end", b), "{j} after barrier {b}");
                }
            }
        }
        let (_, most) = in_flight.into_inner();
        assert_eq!(most, 4, "concurrency kept between barriers, never above it");
    }

    #[tokio::test]
    async fn an_error_from_done_stops_the_run() {
        let mut seen = 0;
        let result = run_ordered(
            0..10usize,
            2,
            |_| false,
            |j| async move { j },
            |_| {
                seen += 1;
                if seen == 3 {
                    anyhow::bail!("stdout closed")
                }
                Ok(())
            },
        )
        .await;
        assert_eq!(result.expect_err("stops").to_string(), "stdout closed");
        assert_eq!(seen, 3);
    }

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
