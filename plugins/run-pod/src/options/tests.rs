//! Table tests on `complete` + `validate` and on the objects `build_objects` makes.

use super::*;
use crate::args::parse_from;

fn options(argv: &[&str]) -> RunPodOptions {
    let (args, mut ctx) =
        parse_from(std::iter::once("kubectl-run_pod").chain(argv.iter().copied())).expect("parses");
    ctx.stderr = Box::new(std::io::sink());
    RunPodOptions::complete(args, &mut ctx).expect("completes")
}

fn validate(argv: &[&str]) -> Result<Validated, (String, bool)> {
    options(argv)
        .validate()
        .map_err(|e| (e.to_string(), e.downcast_ref::<UsageError>().is_some()))
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
