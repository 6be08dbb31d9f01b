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
//! [`run_ordered`] is that schedule, apart from what is run. It also hands the
//! results over in input order, and bounds how far creates run ahead of that
//! output ([`Window`]): a slow early object (one waiting through rounds of
//! `Retry-After`) would otherwise leave every later answer held in memory.
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

/// How far jobs may run ahead of the output: finished outputs wait for every earlier
/// one to be delivered, so without a bound one slow early job makes every later
/// output pile up in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Jobs started but not yet delivered (in flight or held), at most.
    pub jobs: usize,
    /// No job is started while the held outputs weigh this much or more.
    pub weight: usize,
}

/// Runs `jobs` with at most `concurrency` in flight, except that a job for which
/// `is_barrier` holds waits until every earlier job is done and runs alone; `done`
/// gets the outputs in the order of `jobs`, in batches (those that became
/// deliverable together; an error stops the run). An output that finishes before an
/// earlier one is held, within `window`: no job is started while `window.jobs` of
/// them are started but not delivered, or while the held outputs weigh (by `weight`)
/// `window.weight` or more. Jobs are taken from the iterator only as they are
/// started, so a lazy input stays lazy.
///
/// The slots that finished jobs free are filled again before their outputs go to
/// `done`: `done` writes to stdout (a hand-over to tokio's blocking pool), and while
/// it is awaited nothing here runs. Delivered first, one output at a time, each
/// answer of a round cost one hand-over before the next create was sent, and on a
/// loaded machine the last slots of a round were refilled milliseconds late, round
/// after round (measured at 25 ms: docs/performance.md, "Far away").
pub async fn run_ordered<J, T, Fut>(
    jobs: impl Iterator<Item = J>,
    concurrency: usize,
    window: Window,
    is_barrier: impl Fn(&J) -> bool,
    run: impl Fn(J) -> Fut,
    weight: impl Fn(&T) -> usize,
    mut done: impl AsyncFnMut(Vec<T>) -> anyhow::Result<()>,
) -> anyhow::Result<()>
where
    Fut: Future<Output = T>,
{
    use futures::{FutureExt as _, StreamExt as _};
    let concurrency = concurrency.max(1);
    let mut jobs = jobs.fuse();
    let mut in_flight = futures::stream::FuturesUnordered::new();
    let mut held = Held::new(weight);
    let mut started = 0;
    // A barrier taken from the input: no job starts until it has run alone.
    let mut barrier = None;
    loop {
        // Free slots first (see above), within the window; then the new jobs are
        // polled once, which sends their requests (a future pushed here is polled
        // only when `in_flight` is, and not while `done` is awaited). Outputs that
        // came meanwhile free more slots: again until none did.
        loop {
            while barrier.is_none() && in_flight.len() < concurrency {
                if started - held.delivered >= window.jobs.max(1) || held.weight >= window.weight {
                    if !held.stalled {
                        held.stalled = true;
                        tracing::debug!(
                            ahead = started - held.delivered,
                            held_bytes = held.weight,
                            "window full: no create is started until the output catches up"
                        );
                    }
                    break;
                }
                match jobs.next() {
                    None => break,
                    Some(job) if is_barrier(&job) => barrier = Some(job),
                    Some(job) => {
                        let seq = started;
                        started += 1;
                        in_flight.push(run(job).map(move |output| (seq, output)));
                    }
                }
            }
            let mut came = false;
            while let Some(Some((seq, output))) = in_flight.next().now_or_never() {
                held.finished(seq, output);
                came = true;
            }
            if !came {
                break;
            }
        }
        // Then the output; delivering may open the window, so fill again after it.
        if held.deliverable() {
            held.deliver(&mut done).await?;
            continue;
        }
        if in_flight.is_empty() {
            // Everything started is done and delivered: the barrier goes alone, or
            // the input is exhausted.
            let Some(job) = barrier.take() else {
                return Ok(());
            };
            let seq = started;
            started += 1;
            held.finished(seq, run(job).await);
            continue;
        }
        if let Some((seq, output)) = in_flight.next().await {
            held.finished(seq, output);
        }
    }
}

/// The outputs of [`run_ordered`] that finished ahead of an earlier one.
struct Held<T, W> {
    outputs: std::collections::BTreeMap<usize, (T, usize)>,
    /// The sequence number of the next output to deliver.
    delivered: usize,
    /// What the held outputs weigh together.
    weight: usize,
    /// Whether the window was found full since the last delivery (logged once).
    stalled: bool,
    weigh: W,
}

impl<T, W: Fn(&T) -> usize> Held<T, W> {
    fn new(weigh: W) -> Self {
        Self {
            outputs: std::collections::BTreeMap::new(),
            delivered: 0,
            weight: 0,
            stalled: false,
            weigh,
        }
    }

    /// Output `seq` finished: held until [`Held::deliver`].
    fn finished(&mut self, seq: usize, output: T) {
        let weight = (self.weigh)(&output);
        self.weight += weight;
        self.outputs.insert(seq, (output, weight));
    }

    /// Whether the next output to deliver has finished.
    fn deliverable(&self) -> bool {
        self.outputs.contains_key(&self.delivered)
    }

    /// Hands the finished outputs that follow the delivered ones to `done`, in one
    /// batch.
    async fn deliver(
        &mut self,
        done: &mut impl AsyncFnMut(Vec<T>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut batch = Vec::new();
        while let Some((output, weight)) = self.outputs.remove(&self.delivered) {
            self.weight -= weight;
            self.delivered += 1;
            batch.push(output);
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.stalled = false;
        done(batch).await
    }
}

/// The create loop's `window full` event, as tests see it.
///
/// Why not a subscriber of the test's own thread (`tracing::subscriber::set_default`):
/// tracing caches each event site's interest process-wide. When another test's thread
/// meets the same site first, with no subscriber of its own, while this test's
/// subscriber is being registered, the site can stay cached as of interest to nobody
/// and the event never comes (found with `--test-threads=16`: `order`'s tests beside
/// the window test hung it every time). One global subscriber, set before any test
/// can meet the site ([`init`], called first by every test here that runs the loop),
/// makes every site of interest from the start; it hands the event to whoever on the
/// same thread asked for it ([`watch`]).
#[cfg(test)]
pub(crate) mod stalls {
    use std::cell::RefCell;

    use tokio::sync::watch;

    thread_local! {
        static SINK: RefCell<Option<watch::Sender<bool>>> = const { RefCell::new(None) };
    }

    struct Forward;

    impl tracing::Subscriber for Forward {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            struct Message(bool);
            impl tracing::field::Visit for Message {
                fn record_debug(
                    &mut self,
                    field: &tracing::field::Field,
                    value: &dyn std::fmt::Debug,
                ) {
                    if field.name() == "message" {
                        self.0 = format!("{value:?}").starts_with("window full");
                    }
                }
            }
            let mut message = Message(false);
            event.record(&mut message);
            if message.0 {
                SINK.with(|sink| {
                    if let Some(sink) = &*sink.borrow() {
                        sink.send_replace(true);
                    }
                });
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    /// Sets the global subscriber, once for the test binary.
    pub(crate) fn init() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            tracing::subscriber::set_global_default(Forward)
                .expect("no other global subscriber in create-file's unit tests");
        });
    }

    /// Becomes `true` when the create loop on this thread (a current-thread runtime's
    /// test) logs that its window is full.
    pub(crate) fn watch() -> watch::Receiver<bool> {
        init();
        let (sink, full) = watch::channel(false);
        SINK.with(|s| *s.borrow_mut() = Some(sink));
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs 0..30 with barriers at 7 and 8 (back to back) and 20: what ran when.
    #[tokio::test]
    async fn barriers_wait_for_everything_before_and_hold_everything_after() {
        stalls::init();
        use std::cell::RefCell;
        let barriers = [7, 8, 20];
        let events = RefCell::new(Vec::new());
        let in_flight = RefCell::new((0usize, 0usize));
        let mut finished = Vec::new();
        run_ordered(
            0..30usize,
            4,
            UNBOUNDED,
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
            |_| 0,
            async |batch| {
                finished.extend(batch);
                Ok(())
            },
        )
        .await
        .expect("run");
        assert_eq!(finished, (0..30).collect::<Vec<_>>(), "delivered in order");
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
        stalls::init();
        let mut seen = 0;
        let result = run_ordered(
            0..10usize,
            2,
            UNBOUNDED,
            |_| false,
            |j| async move { j },
            |_| 0,
            async |batch: Vec<usize>| {
                for _ in batch {
                    seen += 1;
                    if seen == 3 {
                        anyhow::bail!("stdout closed")
                    }
                }
                Ok(())
            },
        )
        .await;
        assert_eq!(result.expect_err("stops").to_string(), "stdout closed");
        assert_eq!(seen, 3);
    }

    /// Jobs finish in input order, a few at a time: each time outputs are handed to
    /// `done` (a stdout write, awaited), the slots their jobs freed are already
    /// taken again, so the server never waits on the output.
    #[tokio::test]
    async fn freed_slots_are_refilled_before_the_output_is_written() {
        use std::cell::Cell;
        let (in_flight, ended) = (Cell::new(0usize), Cell::new(0usize));
        let mut batches = Vec::new();
        run_ordered(
            0..40usize,
            4,
            UNBOUNDED,
            |_| false,
            |j| {
                let (in_flight, ended) = (&in_flight, &ended);
                in_flight.set(in_flight.get() + 1);
                async move {
                    // Job j ends after j / 3 + 1 yields: in order, in threes.
                    for _ in 0..=j / 3 {
                        tokio::task::yield_now().await;
                    }
                    in_flight.set(in_flight.get() - 1);
                    ended.set(ended.get() + 1);
                    j
                }
            },
            |_| 0,
            async |batch: Vec<usize>| {
                let not_started = 40 - (ended.get() + in_flight.get());
                assert_eq!(
                    in_flight.get(),
                    4.min(40 - ended.get()),
                    "a slot left free while {batch:?} is written ({not_started} not started)"
                );
                batches.push(batch);
                Ok(())
            },
        )
        .await
        .expect("run");
        assert_eq!(
            batches.concat(),
            (0..40).collect::<Vec<_>>(),
            "delivered in order"
        );
        assert!(
            batches.len() < 40,
            "outputs that finished together are written together: {batches:?}"
        );
    }

    const UNBOUNDED: Window = Window {
        jobs: usize::MAX,
        weight: usize::MAX,
    };

    /// Job 0 is slow, every other job finishes at once: jobs start only within the
    /// window (counted from the first output not yet delivered), the window is used
    /// whole, and the outputs still come in order.
    #[tokio::test]
    async fn a_slow_first_job_lets_only_the_window_run_ahead() {
        stalls::init();
        use std::cell::Cell;
        let window = Window {
            jobs: 10,
            weight: usize::MAX,
        };
        let (delivered, most_ahead) = (Cell::new(0usize), Cell::new(0usize));
        let mut outputs = Vec::new();
        run_ordered(
            0..100usize,
            4,
            window,
            |_| false,
            |j| {
                let ahead = j + 1 - delivered.get();
                assert!(ahead <= window.jobs, "job {j} started {ahead} ahead");
                most_ahead.set(most_ahead.get().max(ahead));
                async move {
                    if j == 0 {
                        for _ in 0..100 {
                            tokio::task::yield_now().await;
                        }
                    }
                    j
                }
            },
            |_| 0,
            async |batch: Vec<usize>| {
                delivered.set(delivered.get() + batch.len());
                outputs.extend(batch);
                Ok(())
            },
        )
        .await
        .expect("run");
        assert_eq!(outputs, (0..100).collect::<Vec<_>>());
        assert_eq!(most_ahead.get(), window.jobs, "the whole window was used");
    }

    /// Held outputs weigh 10 each: no job starts while 40 or more are held.
    #[tokio::test]
    async fn the_weight_of_held_outputs_stops_new_jobs() {
        stalls::init();
        use std::cell::Cell;
        let window = Window {
            jobs: usize::MAX,
            weight: 35,
        };
        let (finished, delivered, most_held) = (Cell::new(0), Cell::new(0), Cell::new(0));
        run_ordered(
            0..50usize,
            2,
            window,
            |_| false,
            |j| {
                // Finished but not delivered: what is held now.
                let held = finished.get() - delivered.get();
                assert!(held * 10 < 35, "job {j} started with {held} held");
                most_held.set(most_held.get().max(held));
                let finished = &finished;
                async move {
                    if j % 10 == 0 {
                        for _ in 0..100 {
                            tokio::task::yield_now().await;
                        }
                    }
                    finished.set(finished.get() + 1);
                    j
                }
            },
            |_| 10,
            async |batch: Vec<usize>| {
                delivered.set(delivered.get() + batch.len());
                Ok(())
            },
        )
        .await
        .expect("run");
        assert_eq!(delivered.get(), 50);
        assert_eq!(
            most_held.get(),
            3,
            "started while 30 were held, never at 40"
        );
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
