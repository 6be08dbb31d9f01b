//! Table tests on `complete` + `validate` and on the objects `build_objects` makes.

use super::*;
use crate::args::parse_from;

/// `complete` on `argv`, against a server given by flag (no kubeconfig is read from
/// the machine; nothing is sent).
fn completed(argv: &[&str]) -> Result<RunPodOptions> {
    // Before `argv`: after a `--` they would be the container's arguments.
    let server = ["--server=https://127.0.0.1:9", "--kubeconfig="];
    let argv = std::iter::once("kubectl-run_pod")
        .chain(server)
        .chain(argv.iter().copied());
    let (args, mut ctx) = parse_from(argv).expect("parses");
    ctx.stderr = Box::new(std::io::sink());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(RunPodOptions::complete(args, &mut ctx))
}

fn options(argv: &[&str]) -> RunPodOptions {
    completed(argv).expect("completes")
}

/// `complete`, then `validate`: the first error of either, and whether it is a usage
/// error.
fn validate(argv: &[&str]) -> Result<Validated, (String, bool)> {
    let usage = |e: anyhow::Error| (e.to_string(), e.downcast_ref::<UsageError>().is_some());
    completed(argv).map_err(usage)?.validate().map_err(usage)
}

#[test]
fn clap_definition_is_consistent() {
    crate::args::command().debug_assert();
}

#[test]
fn flags_follow_the_house_rules() {
    assert_eq!(crate::args::PLUGIN.lint(), Vec::<String>::new());
}

#[test]
fn generator_choice() {
    let g = |argv: &[&str]| validate(argv).expect("valid").generator;
    assert_eq!(
        g(&["x", "--image=nginx"]),
        GeneratorChoice::Implicit(RunGenerator::RunPodV1)
    );
    assert_eq!(
        g(&["x", "--image=nginx", "--replicas=1"]),
        GeneratorChoice::Implicit(RunGenerator::DeploymentAppsV1)
    );
    assert_eq!(
        g(&["x", "--image=nginx", "--schedule=@daily"]),
        GeneratorChoice::Implicit(RunGenerator::CronJobV1)
    );
    assert_eq!(
        g(&["x", "--image=nginx", "--generator=job/v1"]),
        GeneratorChoice::Explicit(RunGenerator::JobV1)
    );
    // --restart=OnFailure keeps a pod, as modern kubectl does.
    assert_eq!(
        g(&["x", "--image=nginx", "--restart=OnFailure"]),
        GeneratorChoice::Implicit(RunGenerator::RunPodV1)
    );
}

/// kubectl 1.37 reads the first word after a leading `--` as NAME, the rest as the
/// container's arguments.
#[test]
fn a_leading_double_dash_is_followed_by_the_name() {
    let o = options(&["--image=nginx", "--", "echo", "hi"]);
    assert_eq!(o.name.as_deref(), Some("echo"));
    assert_eq!(o.params.args, ["hi"]);
    let o = options(&["x", "--image=nginx", "--", "echo", "hi"]);
    assert_eq!(o.name.as_deref(), Some("x"));
    assert_eq!(o.params.args, ["echo", "hi"]);
}

#[test]
fn attach_follows_stdin_unless_given() {
    assert!(options(&["x", "--image=nginx", "-i"]).attach);
    assert!(!options(&["x", "--image=nginx", "-i", "--attach=false"]).attach);
    assert!(options(&["x", "--image=nginx", "--attach"]).attach);
    assert!(!options(&["x", "--image=nginx"]).attach);
}

#[test]
fn usage_errors_and_plain_errors() {
    let usage = |argv: &[&str], msg: &str| {
        assert_eq!(
            validate(argv).err(),
            Some((msg.to_string(), true)),
            "{argv:?}"
        )
    };
    let plain = |argv: &[&str], msg: &str| {
        assert_eq!(
            validate(argv).err(),
            Some((msg.to_string(), false)),
            "{argv:?}"
        )
    };
    plain(&["x"], "required flag(s) \"image\" not set");
    plain(&["--image=nginx"], "NAME is required for run");
    plain(&["--image=nginx", "--"], "NAME is required for run");
    plain(&["x", "--image="], "--image is required");
    plain(
        &["x", "--image=Bad"],
        "invalid image name \"Bad\": invalid reference format",
    );
    plain(
        &["x", "--image=nginx", "-t"],
        "-i/--stdin is required for containers with -t/--tty=true",
    );
    usage(
        &["x", "--image=nginx", "-i", "-r", "2"],
        "-i/--stdin requires that replicas is 1, found 2",
    );
    plain(
        &["x", "--image=nginx", "--expose"],
        "--port must be set when exposing a service",
    );
    plain(
        &["x", "--image=nginx", "--port=80x"],
        "--port must be a number",
    );
    plain(
        &["x", "--image=nginx", "--restart=Maybe"],
        "invalid restart policy: Maybe, valid values are: Always, OnFailure, Never",
    );
    usage(
        &["x", "--image=nginx", "--restart=Never", "-r", "3"],
        "--restart=Never requires that --replicas=1, found 3",
    );
    plain(
        &["x", "--image=nginx", "--rm"],
        "--rm should only be used for attached containers",
    );
    plain(
        &["x", "--image=nginx", "--attach", "--dry-run=server"],
        "--dry-run=[server|client] can't be used with attached containers options (--attach, --stdin, or --tty)",
    );
    plain(
        &["x", "--image=nginx", "--image-pull-policy=Sometimes"],
        "invalid image pull policy: Sometimes, valid values are: Always, IfNotPresent, Never",
    );
    plain(
        &["x", "--image=nginx", "--pod-running-timeout=0s"],
        "--pod-running-timeout must be higher than zero",
    );
    usage(
        &[
            "x",
            "--image=nginx",
            "--expose",
            "--port=80",
            "--service-generator=",
        ],
        "No service generator specified",
    );
    plain(
        &["x", "--image=nginx", "--generator=cronjob/v1beta1"],
        "Parameter: schedule is required",
    );
    plain(
        &[
            "x",
            "--image=nginx",
            "--override-type=patch",
            "--overrides={}",
        ],
        "invalid override type: patch",
    );
}

/// kubectl's `Overrider` reads --override-type only when there is an override to
/// apply, and an empty type is its default, merge.
#[test]
fn the_override_type_is_read_only_with_overrides() {
    let v = validate(&["x", "--image=nginx", "--override-type=patch"]).expect("valid");
    assert_eq!(v.override_type, OverrideType::Merge);
    let v = validate(&["x", "--image=nginx", "--override-type=", "--overrides={}"]).expect("valid");
    assert_eq!(v.override_type, OverrideType::Merge);
    let v = validate(&[
        "x",
        "--image=nginx",
        "--override-type=json",
        "--overrides=[]",
    ])
    .expect("valid");
    assert_eq!(v.override_type, OverrideType::Json);
}

/// `--annotations` and `--env` are pflag string arrays: a lone empty value reads back
/// as none (kubectl runs the pod); beside another value it is kept, and refused.
#[test]
fn a_lone_empty_annotation_or_env_is_none() {
    let o = options(&["x", "--image=nginx", "--annotations=", "--env="]);
    assert!(o.params.annotations.is_empty() && o.params.env.is_empty());
    let o = options(&["x", "--image=nginx", "--env=", "--env=A=1"]);
    assert_eq!(o.params.env, ["", "A=1"]);
}

#[test]
fn empty_restart_defaults_by_interactivity() {
    assert_eq!(
        validate(&["x", "--image=nginx", "--restart="])
            .expect("valid")
            .restart_policy,
        "Always"
    );
    assert_eq!(
        validate(&["x", "--image=nginx", "-i", "--restart="])
            .expect("valid")
            .restart_policy,
        "OnFailure"
    );
}

#[test]
fn legacy_workloads_keep_their_restart_default_unless_given() {
    let build = |argv: &[&str]| {
        let mut o = options(argv);
        let v = o.validate().expect("valid");
        o.build_objects(&v, v.generator.generator(), None)
            .expect("built")
            .0
    };
    let job = build(&["x", "--image=nginx", "--generator=job/v1"]);
    assert_eq!(
        job["spec"]["template"]["spec"]["restartPolicy"],
        "OnFailure"
    );
    let job = build(&[
        "x",
        "--image=nginx",
        "--generator=job/v1",
        "--restart=Never",
    ]);
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    let deployment = build(&["x", "--image=nginx", "--replicas=2"]);
    assert!(
        deployment["spec"]["template"]["spec"]
            .get("restartPolicy")
            .is_none()
    );
}

#[test]
fn expose_builds_the_service_and_applies_service_overrides() {
    let mut o = options(&[
        "x",
        "--image=nginx",
        "--port=8080",
        "--expose",
        "--service-overrides={\"spec\":{\"type\":\"NodePort\"}}",
    ]);
    let v = o.validate().expect("valid");
    let (pod, svc) = o
        .build_objects(&v, RunGenerator::RunPodV1, Some("team"))
        .expect("built");
    let svc = svc.expect("service");
    assert_eq!(svc["spec"]["type"], "NodePort");
    assert_eq!(svc["spec"]["selector"], serde_json::json!({"run": "x"}));
    assert_eq!(svc["spec"]["ports"][0]["port"], 8080);
    assert_eq!(svc["metadata"]["namespace"], "team");
    assert_eq!(pod["metadata"]["namespace"], "team");
}

#[test]
fn args_before_and_after_the_dash_are_container_args() {
    let o = options(&["x", "--image=busybox", "a", "--", "b", "--c"]);
    assert_eq!(o.params.args, ["a", "b", "--c"]);
}

#[test]
fn cascade_values_are_kubectls() {
    let parse = |value: &str| {
        let mut warnings = Vec::new();
        let policy = parse_cascade(value, &mut warnings).map_err(|e| e.to_string());
        (policy, String::from_utf8(warnings).expect("utf-8"))
    };
    assert_eq!(
        parse("orphan"),
        (Ok(PropagationPolicy::Orphan), String::new())
    );
    assert_eq!(
        parse("foreground"),
        (Ok(PropagationPolicy::Foreground), String::new())
    );
    assert_eq!(
        parse("F"),
        (
            Ok(PropagationPolicy::Orphan),
            "warning: --cascade=F is deprecated (boolean value) and can be replaced with --cascade=orphan.\n".into()
        )
    );
    assert_eq!(parse("true").0, Ok(PropagationPolicy::Background));
    assert_eq!(
        parse("Orphan"),
        (
            Err("invalid cascade value (Orphan). Must be \"background\", \"foreground\", or \"orphan\"".into()),
            String::new()
        )
    );
}

/// kubectl 1.37's `Complete` checks the restart and pull policies and the timeout,
/// then builds its client — a kubeconfig that does not load fails there —, then `-o`
/// and `--cascade`; `Validate`'s checks come after all of it.
#[test]
fn complete_resolves_the_kubeconfig_in_kubectls_order() {
    let dir = tempfile::tempdir().expect("a directory");
    let kubeconfig = dir.path().join("config");
    std::fs::write(&kubeconfig, "garbage: [\n").expect("written");
    let flag = format!("--kubeconfig={}", kubeconfig.display());
    let first_error = |argv: &[&str]| {
        let argv = ["kubectl-run_pod", flag.as_str()]
            .into_iter()
            .chain(argv.iter().copied());
        let (args, mut ctx) = parse_from(argv).expect("parses");
        ctx.stderr = Box::new(std::io::sink());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        match runtime.block_on(RunPodOptions::complete(args, &mut ctx)) {
            Ok(mut o) => o.validate().map(|_| ()),
            Err(e) => Err(e),
        }
        .expect_err("fails")
        .to_string()
    };
    let unloadable = format!(
        "error loading config file \"{}\": yaml: line 1: did not find expected node content",
        kubeconfig.display()
    );
    // Before the client: the policies and the timeout, even without a NAME.
    assert_eq!(
        first_error(&["--image=nginx", "--restart=Maybe"]),
        "invalid restart policy: Maybe, valid values are: Always, OnFailure, Never"
    );
    assert_eq!(
        first_error(&["--image=nginx", "--image-pull-policy=Sometimes"]),
        "invalid image pull policy: Sometimes, valid values are: Always, IfNotPresent, Never"
    );
    assert_eq!(
        first_error(&["--image=nginx", "--pod-running-timeout=0s"]),
        "--pod-running-timeout must be higher than zero"
    );
    // After it: -o, --cascade and every check of validate.
    for argv in [
        &["--image=nginx"][..],
        &["x", "--image=nginx", "-o", "bogus"],
        &["x", "--image=nginx", "--cascade=bogus"],
        &["x", "--image=nginx", "--rm"],
        &["x", "--image=nginx", "--port=80x"],
        &["x", "--image=nginx", "--dry-run=client"],
    ] {
        assert_eq!(first_error(argv), unloadable, "{argv:?}");
    }
}
