//! Completion tests: a command shaped like our plugins (kubectl's global flags plus
//! typical local flags), completed the way kubectl's helper calls would.

use std::ffi::OsString;

use clap::{Args as _, Command};

use super::*;
use crate::completion::engine::{Lookup, plan};

fn command() -> Command {
    let command = Command::new("kubectl rolling-update")
        .arg(
            clap::Arg::new("image")
                .long("image")
                .required(true)
                .help("Image to use for upgrading the replication controller."),
        )
        .arg(
            clap::Arg::new("output")
                .short('o')
                .long("output")
                .help("Output format."),
        )
        .arg(
            clap::Arg::new("restart")
                .long("restart")
                .help("The restart policy."),
        )
        .arg(
            clap::Arg::new("dry-run")
                .long("dry-run")
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("client")
                .help("Must be none, server, or client."),
        )
        .arg(
            clap::Arg::new("filename")
                .short('f')
                .long("filename")
                .action(clap::ArgAction::Append)
                .help("Filename or URL."),
        )
        .arg(
            clap::Arg::new("mode")
                .long("mode")
                .value_parser(["fast", "slow"])
                .help("A flag with declared values."),
        )
        .arg(
            clap::Arg::new("interactive")
                .short('i')
                .long("stdin")
                .action(clap::ArgAction::SetTrue)
                .help("Keep stdin open."),
        )
        .arg(
            clap::Arg::new("secret")
                .long("secret")
                .hide(true)
                .help("Hidden."),
        )
        .arg(clap::Arg::new("OLD"))
        .arg(clap::Arg::new("NEW"));
    crate::flags::ConfigFlags::augment_args(command)
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

fn values(reply: &Reply) -> Vec<&str> {
    reply.candidates.iter().map(|c| c.value.as_str()).collect()
}

const RC: &[Source] = &[Source::ReplicationControllers, Source::Nothing];

#[test]
fn long_flag_names_are_filtered_by_prefix_with_descriptions() {
    let p = plan(&command(), &words(&["web", "--re"]), RC);
    assert_eq!(values(&p.reply), ["--restart", "--request-timeout"]);
    assert_eq!(p.reply.directive, Directive::NO_FILE_COMP);
    assert_eq!(
        p.reply.candidates[0].description.as_deref(),
        Some("The restart policy.")
    );
    assert!(p.lookup.is_none());
}

#[test]
fn a_single_dash_lists_long_and_short_forms_but_not_hidden_or_given_flags() {
    let p = plan(&command(), &words(&["--image", "x", "-"]), RC);
    let v = values(&p.reply);
    assert!(v.contains(&"-o") && v.contains(&"--output") && v.contains(&"-n"));
    assert!(v.contains(&"--help"), "{v:?}");
    assert!(!v.contains(&"--image"), "given flags are not offered again");
    assert!(!v.contains(&"--secret"), "hidden flags are not offered");
}

#[test]
fn repeatable_flags_are_offered_again() {
    let p = plan(&command(), &words(&["-f", "a.yaml", "--fil"]), RC);
    assert_eq!(values(&p.reply), ["--filename"]);
}

#[test]
fn output_values_after_space_after_equals_and_attached() {
    for w in [&["-o", ""][..], &["--output", ""][..]] {
        let p = plan(&command(), &words(w), RC);
        assert_eq!(
            values(&p.reply),
            [
                "json",
                "yaml",
                "kyaml",
                "name",
                "go-template",
                "go-template-file",
                "template",
                "templatefile",
                "jsonpath",
                "jsonpath-as-json",
                "jsonpath-file"
            ],
            "{w:?}"
        );
        assert_eq!(p.reply.directive, Directive::NO_FILE_COMP);
    }
    let p = plan(&command(), &words(&["--output=y"]), RC);
    assert_eq!(values(&p.reply), ["yaml"]);
    let p = plan(&command(), &words(&["-o=n"]), RC);
    assert_eq!(values(&p.reply), ["name"]);
}

#[test]
fn restart_and_dry_run_values() {
    let p = plan(&command(), &words(&["--restart", "O"]), RC);
    assert_eq!(values(&p.reply), ["OnFailure"]);
    let p = plan(&command(), &words(&["--dry-run="]), RC);
    assert_eq!(values(&p.reply), ["none", "client", "server"]);
}

#[test]
fn an_optional_value_flag_does_not_swallow_the_next_word() {
    // `--dry-run web <TAB>`: `web` is OLD, so NEW is being completed (nothing).
    let p = plan(&command(), &words(&["--dry-run", "web", ""]), RC);
    assert!(p.lookup.is_none());
    let p = plan(&command(), &words(&["--dry-run", ""]), RC);
    assert_eq!(
        p.lookup,
        Some(Lookup::ReplicationControllers {
            prefix: String::new()
        })
    );
}

#[test]
fn declared_possible_values_win() {
    let p = plan(&command(), &words(&["--mode", ""]), RC);
    assert_eq!(values(&p.reply), ["fast", "slow"]);
}

#[test]
fn namespace_values_are_looked_up_in_every_spelling() {
    for w in [
        &["-n", "ku"][..],
        &["--namespace", "ku"][..],
        &["--namespace=ku"][..],
        &["-it", "-n", "ku"][..],
    ] {
        let p = plan(&command(), &words(w), RC);
        assert_eq!(
            p.lookup,
            Some(Lookup::Namespaces {
                prefix: "ku".into()
            }),
            "{w:?}"
        );
    }
}

#[test]
fn context_values_come_from_the_kubeconfig() {
    let p = plan(&command(), &words(&["--context", "k"]), RC);
    assert_eq!(p.lookup, Some(Lookup::Contexts { prefix: "k".into() }));
}

#[test]
fn first_positional_is_a_replication_controller_with_required_flags() {
    let p = plan(&command(), &words(&["-n", "prod", ""]), RC);
    assert_eq!(
        p.lookup,
        Some(Lookup::ReplicationControllers {
            prefix: String::new()
        })
    );
    assert_eq!(values(&p.reply), ["--image"]);
    let p = plan(&command(), &words(&["fro"]), RC);
    assert_eq!(
        p.lookup,
        Some(Lookup::ReplicationControllers {
            prefix: "fro".into()
        })
    );
    assert!(
        p.reply.candidates.is_empty(),
        "required flags only on an empty word"
    );
}

#[test]
fn second_positional_and_beyond_offer_nothing() {
    let p = plan(&command(), &words(&["web", "--image=x", ""]), RC);
    assert!(p.lookup.is_none());
    assert!(p.reply.candidates.is_empty());
    assert_eq!(p.reply.directive, Directive::NO_FILE_COMP);
}

#[test]
fn attached_short_value_does_not_make_the_next_word_a_value() {
    let p = plan(&command(), &words(&["-nprod", ""]), RC);
    assert_eq!(
        p.lookup,
        Some(Lookup::ReplicationControllers {
            prefix: String::new()
        })
    );
}

#[test]
fn filename_offers_manifest_extensions_as_a_filter() {
    let p = plan(&command(), &words(&["-f", ""]), RC);
    assert_eq!(values(&p.reply), ["json", "yaml", "yml"]);
    assert_eq!(p.reply.directive, Directive::FILTER_FILE_EXT);
}

#[test]
fn kubeconfig_paths_use_file_completion() {
    let p = plan(&command(), &words(&["--kubeconfig", ""]), RC);
    assert_eq!(p.reply.directive, Directive::DEFAULT);
}

#[test]
fn after_double_dash_nothing_is_completed() {
    let p = plan(&command(), &words(&["web", "--", "-"]), RC);
    assert!(p.reply.candidates.is_empty() && p.lookup.is_none());
}

#[test]
fn no_words_at_all_completes_the_first_positional() {
    let p = plan(&command(), &[], RC);
    assert!(matches!(
        p.lookup,
        Some(Lookup::ReplicationControllers { .. })
    ));
}

#[test]
fn complete_without_a_cluster_is_silent_and_keeps_static_candidates() {
    // A kubeconfig that does not exist: the lookup fails quietly.
    let reply = complete(
        &command(),
        &words(&["--kubeconfig", "/nonexistent/kubeconfig", ""]),
        RC,
    );
    assert_eq!(
        reply.render(true),
        "--image\tImage to use for upgrading the replication controller.\n:4\n"
    );
}

#[test]
fn contexts_are_listed_from_the_kubeconfig_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts:\n- name: kind-b\n  context: {cluster: c, user: u}\n- name: kind-a\n  context: {cluster: c, user: u}\n- name: prod\n  context: {cluster: c, user: u}\n",
    )
    .unwrap();
    let reply = complete(
        &command(),
        &words(&["--kubeconfig", path.to_str().unwrap(), "--context", "kind"]),
        RC,
    );
    assert_eq!(values(&reply), ["kind-a", "kind-b"]);
}

fn argv(a: &[&str]) -> Vec<OsString> {
    a.iter().map(OsString::from).collect()
}

#[test]
fn detects_the_helper_name_and_the_hidden_commands() {
    assert_eq!(
        Invocation::detect(&argv(&[
            "/home/u/.krew/bin/kubectl_complete-run_pod",
            "x",
            ""
        ])),
        Some(Invocation::Complete {
            words: words(&["x", ""]),
            descriptions: true
        })
    );
    assert_eq!(
        Invocation::detect(&argv(&["kubectl-run_pod", "__completeNoDesc", "--r"])),
        Some(Invocation::Complete {
            words: words(&["--r"]),
            descriptions: false
        })
    );
    assert_eq!(
        Invocation::detect(&argv(&["/x/kubectl-run_pod", "completion", "zsh"])),
        Some(Invocation::Script {
            shell: Shell::Zsh,
            bin_name: "kubectl-run_pod".into()
        })
    );
    assert_eq!(
        Invocation::detect(&argv(&["kubectl-run_pod", "completion"])),
        Some(Invocation::MissingShell)
    );
}

#[test]
fn a_pod_named_completion_still_reaches_the_plugin() {
    for a in [
        &["kubectl-run_pod", "completion", "--image=nginx"][..],
        &["kubectl-run_pod", "completion", "bash", "--image=nginx"][..],
        &["kubectl-rolling_update", "completion", "completion-v2"][..],
        &["kubectl-run_pod", "web", "completion"][..],
        &["kubectl-run_pod"][..],
    ] {
        assert_eq!(Invocation::detect(&argv(a)), None, "{a:?}");
    }
}

#[test]
fn helper_names_follow_kubectl() {
    assert_eq!(helper_name("kubectl-run_pod"), "kubectl_complete-run_pod");
    assert_eq!(helper_name("kubectl-foo-bar"), "kubectl_complete-foo-bar");
}

#[test]
fn scripts_are_generated_for_the_binary_name() {
    for (shell, needle) in [
        (Shell::Bash, "-o default kubectl-rolling_update\n"),
        (Shell::Zsh, "#compdef kubectl-rolling_update"),
        (Shell::Fish, "complete -c kubectl-rolling_update"),
    ] {
        let mut out = Vec::new();
        let code = run(
            Invocation::Script {
                shell,
                bin_name: "kubectl-rolling_update".into(),
            },
            command(),
            RC,
            &mut out,
        );
        assert_eq!(code, ExitCode::SUCCESS);
        let script = String::from_utf8(out).unwrap();
        assert!(script.contains(needle), "{shell}: {script}");
        assert!(script.contains("restart"), "{shell} script lists the flags");
    }
}

#[test]
fn the_protocol_answer_is_rendered_on_the_writer() {
    let mut out = Vec::new();
    run(
        Invocation::Complete {
            words: words(&["--restart", ""]),
            descriptions: true,
        },
        command(),
        RC,
        &mut out,
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "Always\nOnFailure\nNever\n:4\n"
    );
}
