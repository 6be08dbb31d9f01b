//! Each tidy rule against a planted violation, a clean input, and the real tree.

use super::*;

fn layer(dir: &str) -> &'static Layer {
    LAYERS.iter().find(|l| l.dir == dir).expect("a layer")
}

fn messages(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

const GENERATE: &str = "shared/resources/src/generate/";
const PRINTERS: &str = "shared/cli/src/printers/";
const FLAGS: &str = "shared/cli/src/flags/";

#[test]
fn generators_may_not_import_io_or_the_client() {
    let rel = "shared/resources/src/generate/pod.rs";
    let planted = [
        ("use std::fs;", "std::fs"),
        (
            "use std::{collections::BTreeMap, io::Write};",
            "std::io::Write",
        ),
        ("use std::io as stdio;", "std::io"),
        ("use kube::{Api, core::ObjectMeta};", "kube::Api"),
        ("use kube::Client;", "kube::Client"),
        (
            "fn f() { let _ = hyper_util::rt::TokioExecutor::new(); }",
            "hyper_util::rt::TokioExecutor::new",
        ),
        (
            "fn f() -> crate::rest::Helper { todo() }",
            "crate::rest::Helper",
        ),
        (
            "fn f() { let _ = format!(\"{}\", crate::rest::retry::x()); }",
            "crate::rest::retry::x",
        ),
        ("use super::super::rest::Helper;", "crate::rest::Helper"),
        ("use crate::openapi;", "crate::openapi"),
        ("use apiclient::status;", "apiclient::status"),
        ("#[tokio::test] async fn t() {}", "tokio::test"),
        (
            "use std::net::TcpStream as T; fn f(_: T) {}",
            "std::net::TcpStream",
        ),
    ];
    for (source, named) in planted {
        let problems = layering(rel, source, layer(GENERATE));
        assert!(
            problems.iter().any(|p| p.rule == Rule::Layering
                && p.path == rel
                && p.line == 1
                && p.message.contains(&format!("`{named}`"))),
            "{source}: {:?}",
            messages(&problems)
        );
    }
    let clean = r#"//! Pure.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use k8s_openapi::api::core::v1::Pod;
use super::Error;
// A comment naming std::fs and tokio::spawn is not an import.
fn f(_: &Pod, _: BTreeMap<String, String>) -> Result<String, Error> {
    let mut s = String::new();
    let _ = write!(s, "{}", "std::io");
    Ok(s)
}
"#;
    assert_eq!(
        messages(&layering(rel, clean, layer(GENERATE))),
        Vec::<String>::new()
    );
}

#[test]
fn printers_may_not_write_to_stdout_or_stderr() {
    let rel = "shared/cli/src/printers/json.rs";
    let planted = [
        ("fn f() { println!(\"x\"); }", "`println!`"),
        ("fn f() { print!(\"x\"); }", "`print!`"),
        ("fn f() { eprintln!(\"x\"); }", "`eprintln!`"),
        ("fn f() { eprint!(\"x\"); }", "`eprint!`"),
        ("fn f(x: u8) { dbg!(x); }", "`dbg!`"),
        ("fn f() { let _ = std::io::stdout(); }", "`std::io::stdout`"),
        (
            "use std::io; fn f() { let _ = io::stderr(); }",
            "`std::io::stderr`",
        ),
        (
            "use std::io::stdout as out; fn f() { out(); }",
            "`std::io::stdout`",
        ),
        (
            "fn f() -> String { format!(\"{:?}\", std::io::stdout()) }",
            "`std::io::stdout`",
        ),
        ("fn f() { if true { std::println!(\"x\"); } }", "`println!`"),
    ];
    for (source, named) in planted {
        let problems = layering(rel, source, layer(PRINTERS));
        assert!(
            problems.iter().any(|p| p.message.contains(named)),
            "{source}: {:?}",
            messages(&problems)
        );
    }
    let clean = r#"//! Writes to the writer it is given.
use std::io::{self, Write};
fn print(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "pod/web created")?;
    let _ = format!("stdout {}", 1);
    Ok(())
}
"#;
    assert_eq!(
        messages(&layering(rel, clean, layer(PRINTERS))),
        Vec::<String>::new()
    );
}

#[test]
fn flags_name_nothing_of_the_plugin_skeleton() {
    let planted = [
        (
            "shared/cli/src/flags/config.rs",
            "use crate::context::Context;",
            "crate::context::Context",
        ),
        (
            "shared/cli/src/flags/config.rs",
            "fn f(r: R) { crate::finish(\"x\", r); }",
            "crate::finish",
        ),
        (
            "shared/cli/src/flags/config/tests.rs",
            "use super::super::super::skeleton;",
            "crate::skeleton",
        ),
        (
            "shared/cli/src/flags/mod.rs",
            "use super::Context;",
            "crate::Context",
        ),
        (
            "shared/cli/src/flags/print.rs",
            "mod inner { use super::super::super::completion::Engine; }",
            "crate::completion::Engine",
        ),
    ];
    for (rel, source, named) in planted {
        let problems = layering(rel, source, layer(FLAGS));
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains(&format!("`{named}`"))),
            "{rel}: {source}: {:?}",
            messages(&problems)
        );
    }
    // Below them is fine: the printers, the flag groups themselves, other crates.
    let clean = "//! Flags.\nuse crate::printers::Printer;\nuse super::Error;\nfn f() { apiclient::home::dir(); }\n";
    assert_eq!(
        messages(&layering(
            "shared/cli/src/flags/print.rs",
            clean,
            layer(FLAGS)
        )),
        Vec::<String>::new()
    );
}

#[test]
fn the_client_and_the_credentials_name_nothing_above_them() {
    let planted = [
        (
            "shared/apiclient/src/client/builder.rs",
            "use crate::kubeconfig::Loader;",
            "crate::kubeconfig::Loader",
        ),
        (
            "shared/apiclient/src/client.rs",
            "fn f() { crate::status::check_err(); }",
            "crate::status::check_err",
        ),
        (
            "shared/apiclient/src/credentials/exec.rs",
            "use crate::client::Requested;",
            "crate::client::Requested",
        ),
        (
            "shared/apiclient/src/credentials.rs",
            "use super::kuberc::Preferences;",
            "crate::kuberc::Preferences",
        ),
    ];
    for (rel, source, named) in planted {
        let layer = LAYERS
            .iter()
            .find(|l| rel.starts_with(l.dir))
            .expect("a layer");
        let problems = layering(rel, source, layer);
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains(&format!("`{named}`"))),
            "{rel}: {source}: {:?}",
            messages(&problems)
        );
    }
    let clean = "//! Below.\nuse crate::tls::TlsError;\nuse crate::credentials::Credentials;\nfn f() { crate::bound::current(); }\n";
    assert_eq!(
        messages(&layering(
            "shared/apiclient/src/client/builder.rs",
            clean,
            layer("shared/apiclient/src/client")
        )),
        Vec::<String>::new()
    );
}

/// A workspace of `members` in a temp dir, each `(dir, Cargo.toml)`.
fn workspace(members: &[(&str, &str)]) -> tempfile::TempDir {
    let list: String = members
        .iter()
        .map(|(d, _)| format!("    \"{d}\",\n"))
        .collect();
    let mut files: Vec<(String, String)> = vec![(
        "Cargo.toml".into(),
        format!(
            "[workspace]\nmembers = [\n{list}]\n\n[workspace.dependencies]\ncli = {{ path = \"shared/cli\" }}\n"
        ),
    )];
    for (dir, manifest) in members {
        files.push((format!("{dir}/Cargo.toml"), manifest.to_string()));
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    tree(&borrowed)
}

const GOTEXT: (&str, &str) = (
    "shared/gotext",
    "[package]\nname = \"gotext\"\n\n[dependencies]\nserde_json.workspace = true\n",
);
const GOYAML: (&str, &str) = (
    "shared/goyaml",
    "[package]\nname = \"goyaml\"\n\n[dependencies]\ngotext.workspace = true\n",
);
const APICLIENT: (&str, &str) = (
    "shared/apiclient",
    "[package]\nname = \"apiclient\"\n\n[dependencies]\ngotext.workspace = true # Go's words\ngoyaml = { workspace = true }\n\n[dev-dependencies]\ntempfile.workspace = true\n",
);
const CLI: (&str, &str) = (
    "shared/cli",
    "[package]\nname = \"cli\"\n\n[dependencies]\napiclient.workspace = true\n\n[target.'cfg(unix)'.dependencies]\nlibc.workspace = true\n",
);
const RUN_POD: (&str, &str) = (
    "plugins/run-pod",
    "[package]\nname = \"kubectl-run_pod\"\n\n[dependencies]\ncli.workspace = true\napiclient.workspace = true\n",
);
const TESTS: (&str, &str) = (
    "tests",
    "[package]\nname = \"tests\"\n\n[dependencies]\ncli.workspace = true\nlocalcluster = { workspace = true, features = [\"supervisor\"] }\n",
);
const LOCALCLUSTER: (&str, &str) = (
    "localcluster",
    "[package]\nname = \"localcluster\"\n\n[dependencies]\nkube.workspace = true\n",
);
const XTASK: (&str, &str) = (
    "xtask",
    "[package]\nname = \"xtask\"\n\n[dependencies]\nlocalcluster.workspace = true\n",
);
const FUZZ_ENTRIES: (&str, &str) = (
    "fuzz/entries",
    "[package]\nname = \"fuzz-entries\"\n\n[dependencies]\nresources.workspace = true\ncli.workspace = true\n",
);
const BENCH: (&str, &str) = (
    "bench",
    "[package]\nname = \"bench\"\n\n[dependencies]\nlocalcluster.workspace = true\ncli.workspace = true\n",
);
/// A clean workspace: every kind of package, each using what it may.
const CLEAN: [(&str, &str); 10] = [
    GOTEXT,
    GOYAML,
    APICLIENT,
    CLI,
    RUN_POD,
    TESTS,
    LOCALCLUSTER,
    XTASK,
    FUZZ_ENTRIES,
    BENCH,
];

/// Planted violations of the crate layers: the member dir, its manifest, the problem.
const PLANTED_LAYERING: &[(&str, &str, &str)] = &[
    // An upward dev-dependency compiles (cargo allows that cycle): tidy refuses it.
    (
        "shared/apiclient",
        "[package]\nname = \"apiclient\"\n\n[dev-dependencies]\ncli.workspace = true\n",
        "shared/apiclient/Cargo.toml:5: [layering] `apiclient` depends on `cli`",
    ),
    (
        "shared/goyaml",
        "[package]\nname = \"goyaml\"\n\n[target.'cfg(unix)'.dependencies.apiclient]\nworkspace = true\n",
        "shared/goyaml/Cargo.toml:4: [layering] `goyaml` depends on `apiclient`",
    ),
    (
        "plugins/run-pod",
        "[package]\nname = \"kubectl-run_pod\"\n\n[dependencies]\ntests = { path = \"../../tests\" }\n",
        "plugins/run-pod/Cargo.toml:5: [layering] `kubectl-run_pod` depends on `tests`",
    ),
    (
        "shared/gotext",
        "[package]\nname = \"gotext\"\n\n[build-dependencies]\ngotext.workspace = true\n",
        "shared/gotext/Cargo.toml:5: [layering] `gotext` depends on `gotext`",
    ),
    (
        "shared/status",
        "[package]\nname = \"status\"\n\n[dependencies]\napiclient.workspace = true\n",
        "shared/status/Cargo.toml: [layering] `status` is a library crate with no place among the layers",
    ),
    // The object-status rules are pure: they never reach the client.
    (
        "shared/objectstatus",
        "[package]\nname = \"objectstatus\"\n\n[dependencies]\ngotext.workspace = true\napiclient.workspace = true\n",
        "shared/objectstatus/Cargo.toml:6: [layering] `objectstatus` depends on `apiclient`",
    ),
    // The test cluster stands on nothing of the workspace: not the e2e tests, not
    // xtask, not the product's crates.
    (
        "localcluster",
        "[package]\nname = \"localcluster\"\n\n[dependencies]\ntests = { path = \"../tests\" }\n",
        "localcluster/Cargo.toml:5: [layering] `localcluster` depends on `tests` (the test cluster is a cluster",
    ),
    (
        "localcluster",
        "[package]\nname = \"localcluster\"\n\n[dev-dependencies]\nxtask = { path = \"../xtask\" }\n",
        "localcluster/Cargo.toml:5: [layering] `localcluster` depends on `xtask`",
    ),
    (
        "localcluster",
        "[package]\nname = \"localcluster\"\n\n[dependencies]\napiclient.workspace = true\n",
        "localcluster/Cargo.toml:5: [layering] `localcluster` depends on `apiclient`",
    ),
    // Nothing depends on xtask or the e2e tests.
    (
        "tests",
        "[package]\nname = \"tests\"\n\n[dev-dependencies]\nxtask = { path = \"../xtask\" }\n",
        "tests/Cargo.toml:5: [layering] `tests` depends on `xtask` (a program of its own",
    ),
    (
        "xtask",
        "[package]\nname = \"xtask\"\n\n[dependencies]\nlocalcluster.workspace = true\ntests = { path = \"../tests\" }\n",
        "xtask/Cargo.toml:6: [layering] `xtask` depends on `tests` (xtask runs",
    ),
    (
        "fuzz/entries",
        "[package]\nname = \"fuzz-entries\"\n\n[dependencies]\nlocalcluster.workspace = true\n",
        "fuzz/entries/Cargo.toml:5: [layering] `fuzz-entries` depends on `localcluster`",
    ),
    // A new package takes its place among the rooms.
    (
        "scratch",
        "[package]\nname = \"scratch\"\n\n[dependencies]\nlocalcluster.workspace = true\n",
        "scratch/Cargo.toml: [layering] `scratch` is a package with no place among the rooms",
    ),
    // The bench is a program of its own: it never links xtask, nor the e2e harness…
    (
        "bench",
        "[package]\nname = \"bench\"\n\n[dependencies]\nlocalcluster.workspace = true\nxtask = { path = \"../xtask\" }\n",
        "bench/Cargo.toml:6: [layering] `bench` depends on `xtask` (a program of its own",
    ),
    (
        "bench",
        "[package]\nname = \"bench\"\n\n[dependencies]\ntests.workspace = true\n",
        "bench/Cargo.toml:5: [layering] `bench` depends on `tests` (the bench uses the library crates and the test cluster",
    ),
    // … and nothing links the bench, not even a test of xtask's.
    (
        "xtask",
        "[package]\nname = \"xtask\"\n\n[dev-dependencies]\nbench.workspace = true\n",
        "xtask/Cargo.toml:5: [layering] `xtask` depends on `bench` (a program of its own",
    ),
];

#[test]
fn a_crate_depends_only_on_the_library_crates_below_it() {
    let clean = workspace(&CLEAN);
    assert_eq!(
        messages(&crates::check(
            &crates::packages(clean.path()).expect("read")
        )),
        Vec::<String>::new()
    );
    let planted = PLANTED_LAYERING;
    for &(dir, manifest, expected) in planted {
        let mut members = CLEAN.to_vec();
        members.retain(|(d, _)| *d != dir);
        members.push((dir, manifest));
        let ws = workspace(&members);
        let problems = messages(&crates::check(&crates::packages(ws.path()).expect("read")));
        assert_eq!(problems.len(), 1, "{dir}: {problems:#?}");
        assert!(problems[0].starts_with(expected), "{problems:#?}");
    }
}

#[test]
fn a_program_s_modules_name_no_item_of_its_main_rs() {
    let main = "//! Root.\nmod paths;\nmod test;\nfn main() {}\npub fn project_root() {}\nconst RUNS: u32 = 5;\n";
    let items = roots::root_items(main);
    assert_eq!(
        items,
        ["main", "project_root", "RUNS"],
        "modules are not items"
    );
    let planted = [
        (
            "fn f() { crate::project_root(); }",
            1,
            "crate::project_root",
        ),
        ("use crate::project_root;", 1, "crate::project_root"),
        ("fn f() -> u32 { super::RUNS }", 1, "crate::RUNS"),
    ];
    for (text, line, named) in planted {
        let problems = messages(&roots::check("xtask/src/test.rs", text, &items));
        let expected = format!(
            "xtask/src/test.rs:{line}: [layering] names `{named}`, an item of the crate root"
        );
        assert_eq!(problems.len(), 1, "{text}: {problems:#?}");
        assert!(problems[0].starts_with(&expected), "{problems:#?}");
    }
    // Through a module, and a module's own items reached by `super::`, are fine.
    for clean in [
        "fn f() { crate::paths::project_root(); }",
        "use crate::paths;\nfn f() { paths::project_root(); }",
    ] {
        assert_eq!(
            messages(&roots::check("xtask/src/test.rs", clean, &items)),
            Vec::<String>::new()
        );
    }
    assert_eq!(
        messages(&roots::check(
            "xtask/src/test/unit.rs",
            "fn f() { super::run(); }",
            &items
        )),
        Vec::<String>::new()
    );
}

#[test]
fn a_layer_rule_that_guards_nothing_is_reported() {
    let dir = tree(&[
        (
            "shared/cli/Cargo.toml",
            "[package]\nname = \"cli\"\n\n[dependencies]\nresources.workspace = true\n",
        ),
        (
            "shared/cli/src/lib.rs",
            "//! x\nmod flags;\npub fn finish() {}\n",
        ),
        ("shared/cli/src/flags/mod.rs", "//! x"),
        ("shared/cli/src/skeleton.rs", "//! x\npub struct Plugin;\n"),
    ]);
    let layers = [
        Layer {
            dir: "shared/cli/src/flags/",
            invariant: "x",
            forbidden: &[
                // Real: a module, an item of the crate root, an item of a module, a
                // library crate it depends on, an outside crate.
                "crate::skeleton",
                "crate::finish",
                "crate::skeleton::Plugin",
                "resources::rest",
                "tokio",
                // Vacuous: names the crate does not have, a crate it cannot name.
                "crate::resource",
                "crate::skeleton::Gone",
                "apiclient",
            ],
            forbidden_macros: &[],
        },
        Layer {
            dir: "shared/cli/src/gone/",
            invariant: "x",
            forbidden: &["crate::skeleton"],
            forbidden_macros: &[],
        },
    ];
    let problems = messages(&vacuous_rules(dir.path(), &layers).expect("checked"));
    assert_eq!(problems.len(), 4, "{problems:#?}");
    for named in [
        "forbids `crate::resource`",
        "forbids `crate::skeleton::Gone`",
        "forbids `apiclient`",
        "`shared/cli/src/gone/` names no directory",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(named)),
            "{named}: {problems:#?}"
        );
    }
}

#[test]
fn an_unparsable_file_of_a_layer_is_reported() {
    let problems = layering("shared/cli/src/flags/x.rs", "fn (", layer(FLAGS));
    assert_eq!(problems.len(), 1);
    assert!(problems[0].message.contains("cannot be parsed"));
}

#[test]
fn module_paths_follow_the_file_layout() {
    assert_eq!(module_path("shared/cli/src/lib.rs"), ["crate"]);
    assert_eq!(
        module_path("shared/cli/src/flags/mod.rs"),
        ["crate", "flags"]
    );
    assert_eq!(
        module_path("shared/cli/src/flags/config/tests.rs"),
        ["crate", "flags", "config", "tests"]
    );
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let missing = module_doc("shared/cli/src/x.rs", "use std::fs;\n").expect("a problem");
    assert_eq!(missing.rule, Rule::ModuleDoc);
    assert_eq!(
        missing.to_string(),
        "shared/cli/src/x.rs:1: [module-doc] the file does not open with a `//!` line saying what it is for"
    );
    assert!(module_doc("shared/cli/src/x.rs", "/// Item doc.\nfn f() {}\n").is_some());
    assert!(module_doc("shared/cli/src/x.rs", "").is_some());
    assert_eq!(
        module_doc(
            "shared/cli/src/x.rs",
            "\n//! What it is for.\nuse std::fs;\n"
        ),
        None
    );
}

/// A tree in a temp dir: `files` as (relative path, contents).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (rel, contents) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, contents).expect("write");
    }
    dir
}

const MAP: &str = "# Architecture\n\n## Code map\n\n### `shared/core/` — the core\n- `cli`: the edge.\n- `printers/`: output; `printers/go_fmt` too.\n\n### `plugins/*` — one binary each\n- `run-pod`: `args`, `options`.\n- `create-file`: `edit`.\n\n## Cross-cutting\n`forgotten` is not in the map.\n";

#[test]
fn every_module_is_in_the_code_map() {
    let dir = tree(&[
        ("ARCHITECTURE.md", MAP),
        ("shared/core/src/lib.rs", "//! x"),
        ("shared/core/src/cli.rs", "//! x"),
        ("shared/core/src/cli/flag_error.rs", "//! x"),
        ("shared/core/src/printers/mod.rs", "//! x"),
        ("shared/core/src/forgotten.rs", "//! x"),
        ("shared/core/src/tests.rs", "//! x"),
        ("plugins/run-pod/src/main.rs", "//! x"),
        ("plugins/run-pod/src/args.rs", "//! x"),
        ("plugins/run-pod/src/options/tests.rs", "//! x"),
        // `edit` is named, but in create-file's bullet, not run-pod's.
        ("plugins/run-pod/src/edit.rs", "//! x"),
        ("plugins/create-file/src/edit.rs", "//! x"),
        ("plugins/rolling-update/src/main.rs", "//! x"),
    ]);
    let problems = code_map(dir.path(), MAP).expect("checked");
    let messages = messages(&problems);
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(
        messages[0].contains("module `forgotten` (shared/core/src/forgotten)"),
        "{messages:#?}"
    );
    assert!(
        messages[1].contains("no section for `plugins/rolling-update/src`"),
        "{messages:#?}"
    );
    assert!(
        messages[2].contains("module `edit` (plugins/run-pod/src/edit)"),
        "{messages:#?}"
    );

    std::fs::remove_file(dir.path().join("shared/core/src/forgotten.rs")).expect("rm");
    std::fs::remove_file(dir.path().join("plugins/run-pod/src/edit.rs")).expect("rm");
    std::fs::remove_dir_all(dir.path().join("plugins/rolling-update")).expect("rm");
    assert_eq!(
        crate::tidy::tests::messages(&code_map(dir.path(), MAP).expect("checked")),
        Vec::<String>::new()
    );
    assert_eq!(code_map(dir.path(), "# no map").expect("checked").len(), 1);
}

#[test]
fn docs_cite_only_files_of_the_repository() {
    let dir = tree(&[
        ("shared/cli/src/lib.rs", "//! x"),
        ("plugins/run-pod/src/main.rs", "//! x"),
        ("fuzz/corpus/quantity/seed", ""),
        ("fuzz/.gitignore", "target\nartifacts\n"),
    ]);
    let root = dir.path();
    let planted = [
        (
            "README.md",
            "See `shared/cli/src/missing.rs` for it.",
            "`shared/cli/src/missing.rs`",
        ),
        (
            "README.md",
            "See [the spec](docs/spec.md#top).",
            "`docs/spec.md`",
        ),
        (
            "README.md",
            "As [1.17 did](../notes/specs/rolling-update-1.17.md).",
            "`../notes/specs/rolling-update-1.17.md`",
        ),
        (
            "plugins/run-pod/README.md",
            "Its `src/missing.rs` holds it.",
            "`src/missing.rs`",
        ),
        (
            "plugins/run-pod/README.md",
            "[main](src/gone.rs)",
            "`src/gone.rs`",
        ),
        (
            "plugins/run-pod/README.md",
            "See ../../../notes/specs/x.md.",
            "`../../../notes/specs/x.md`",
        ),
        (
            "README.md",
            "At `shared/cli/src/lib.rs:12`, `plugins/nope/src/`.",
            "`plugins/nope/src/`",
        ),
    ];
    for (rel, text, named) in planted {
        let problems = doc_citations(root, rel, text);
        assert!(
            problems
                .iter()
                .any(|p| p.rule == Rule::DocCitation && p.line == 1 && p.message.contains(named)),
            "{text}: {:?}",
            messages(&problems)
        );
    }
    let clean = "# Clean\n\n`shared/cli/src/lib.rs:3`, [main](plugins/run-pod/src/main.rs), \
        [web](https://example.com/x.md), [here](#clean), `fuzz/corpus/<target>/`, \
        `plugins/*/src/*.rs`, `target/dist`, `kubectl run`, `a/b` (not a repo path), \
        `cli::flags::ConfigFlags`, `fuzz/artifacts/<target>/` (ignored output).\n\n\
        ```sh\ncat shared/cli/src/nothing.rs\ncd fuzz && ls ../target/fuzz\n```\n";
    assert_eq!(
        messages(&doc_citations(root, "README.md", clean)),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&doc_citations(
            root,
            "plugins/run-pod/README.md",
            "`src/main.rs`, [lib](../../shared/cli/src/lib.rs)"
        )),
        Vec::<String>::new()
    );
}

#[test]
fn a_path_beside_the_checkout_is_refused_even_in_a_shell_block() {
    // The checkout is `<tmp>/checkout`; notes kept beside it, in `<tmp>/shared`, and
    // the checkout's own absolute path are this machine's alone.
    let outer = tempfile::tempdir().expect("temp dir");
    let root = outer.path().join("checkout");
    std::fs::create_dir_all(root.join("shared/cli/src")).expect("mkdir");
    let beside = std::fs::canonicalize(outer.path()).expect("canonical");
    let beside = beside.display();
    for (text, line) in [
        (format!("Read {beside}/shared/specs/x.md first."), 1),
        (
            format!("Setup:\n\n```sh\ncat {beside}/shared/specs/x.md\n```\n"),
            4,
        ),
        (format!("Built in {beside}/checkout/target/x."), 1),
    ] {
        let problems = doc_citations(&root, "CONTRIBUTING.md", &text);
        assert_eq!(problems.len(), 1, "{text}: {:?}", messages(&problems));
        assert_eq!(problems[0].line, line, "{text}");
        assert!(
            problems[0].message.contains(&format!("`{beside}/")),
            "{text}"
        );
    }
    // Paths of every machine are not this one's: `/usr/lib/cni`, `/run/kubeplug/<id>`.
    let clean = "CNI in `/usr/lib/cni`, sockets in `/run/kubeplug/<id>`.\n\n```sh\nls /var/lib/kubelet\n```\n";
    assert_eq!(
        messages(&doc_citations(&root, "CONTRIBUTING.md", clean)),
        Vec::<String>::new()
    );
}

#[test]
fn docs_say_what_a_thing_is_not_its_work_item_number() {
    let dir = tree(&[("shared/cli/src/lib.rs", "//! x")]);
    for (text, cited) in [
        ("The matrix of issue 32 (0, 25 and 100 ms).", "issue 32"),
        ("Binary size (Issue #21).", "Issue #21"),
        ("See issues 17 and 18.", "issues 17"),
    ] {
        let problems = doc_citations(dir.path(), "README.md", text);
        assert_eq!(problems.len(), 1, "{text}: {:?}", messages(&problems));
        assert!(
            problems[0].message.contains(&format!("`{cited}`")),
            "{text}"
        );
    }
    let clean = "krew cannot install them (krew#812); an issue tracker; tissue 3; \
        [the issue](https://github.com/o/r/issues/4).\n\n```sh\n# issue 9\n```\n";
    assert_eq!(
        messages(&doc_citations(dir.path(), "README.md", clean)),
        Vec::<String>::new()
    );
    // A recorded run keeps the words the bench wrote then.
    assert_eq!(
        messages(&doc_citations(
            dir.path(),
            "bench/runs/2026-11-28-0006/results.md",
            "## Matrix (issue 32)"
        )),
        Vec::<String>::new()
    );
}

/// The repository itself keeps every rule (what `cargo xtask tidy` checks).
#[test]
fn the_tree_is_tidy() {
    let problems = check(&crate::paths::project_root()).expect("the tree is readable");
    assert!(
        problems.is_empty(),
        "cargo xtask tidy:\n{}",
        messages(&problems).join("\n")
    );
}

#[test]
fn an_import_cycle_between_modules_is_reported() {
    let src = "shared/core/src";
    let files = |a: &'static str, b: &'static str| {
        vec![
            (
                "shared/core/src/lib.rs",
                "//! x\nmod a;\nmod b;\npub use b::Thing;\n",
            ),
            ("shared/core/src/a.rs", a),
            ("shared/core/src/b.rs", b),
        ]
    };
    // Planted: a names b, b names a, directly, through `super::`, through the
    // crate root's re-export, and only in a function body.
    let planted = [
        ("use crate::b::Thing;", "fn f() { crate::a::g(); }"),
        ("use super::b;", "use super::a::G;"),
        (
            "fn f(_: crate::Thing) {}",
            "fn g() { let _ = crate::a::H; }",
        ),
    ];
    for (a, b) in planted {
        let problems = cycles::cycles(src, &files(a, b));
        assert_eq!(problems.len(), 1, "{a} / {b}: {:?}", messages(&problems));
        let message = &problems[0].to_string();
        assert!(
            message.starts_with(
                "shared/core/src: [import-cycle] import cycle among the modules of the crate"
            ) && message.contains("a → b (shared/core/src/a.rs:1")
                && message.contains("b → a (shared/core/src/b.rs:1"),
            "{message}"
        );
    }
    // A longer circle, one level down: x::p → x::q → x::r → x::p.
    let deep = [
        ("shared/core/src/lib.rs", "mod x;"),
        ("shared/core/src/x/mod.rs", "mod p; mod q; mod r;"),
        ("shared/core/src/x/p.rs", "use super::q::Q;"),
        ("shared/core/src/x/q.rs", "use crate::x::r::R;"),
        ("shared/core/src/x/r.rs", "fn f() { super::p::f(); }"),
    ];
    let problems = cycles::cycles(src, &deep);
    assert_eq!(problems.len(), 1, "{:?}", messages(&problems));
    assert!(problems[0].message.contains("modules of `crate::x`"));
    // Clean: one direction only, a child using its parent, a parent its child, and
    // a test module naming its way back.
    let clean = [
        (
            "shared/core/src/lib.rs",
            "//! x\nmod a;\nmod b;\npub use a::Thing;\nfn f() { b::g(); }\n",
        ),
        (
            "shared/core/src/a.rs",
            "pub struct Thing;\n#[cfg(test)]\nmod tests { use crate::b::g; }\n",
        ),
        (
            "shared/core/src/b.rs",
            "use crate::Thing;\npub fn g(_: Thing) {}\n",
        ),
        (
            "shared/core/src/b/inner.rs",
            "use super::g;\nuse crate::f;\n",
        ),
        ("shared/core/src/a/tests.rs", "use crate::b::g;"),
    ];
    assert_eq!(messages(&cycles::cycles(src, &clean)), Vec::<String>::new());
}

/// Names the bottom modules and the plugins' cores may not use: the file, the planted
/// source and the name reported.
const BELOW_THEIR_SEAMS: &[(&str, &str, &str)] = &[
    // apiclient's bottom: error, tls, home, term name nothing above them.
    (
        "shared/apiclient/src/error.rs",
        "use crate::client::Requested;",
        "crate::client::Requested",
    ),
    (
        "shared/apiclient/src/tls.rs",
        "fn f() { crate::go_net::failure(); }",
        "crate::go_net::failure",
    ),
    (
        "shared/apiclient/src/home.rs",
        "use super::bound::current;",
        "crate::bound::current",
    ),
    (
        "shared/apiclient/src/term.rs",
        "use crate::warnings;",
        "crate::warnings",
    ),
    (
        "shared/apiclient/src/home.rs",
        "use crate::kubeconfig::LoadingRules;",
        "crate::kubeconfig::LoadingRules",
    ),
    // The kubeconfig loader builds a Config, never a client.
    (
        "shared/apiclient/src/kubeconfig/loader.rs",
        "fn f() { crate::client::builder(); }",
        "crate::client::builder",
    ),
    (
        "shared/resources/src/typed.rs",
        "use apiclient::client;",
        "apiclient::client",
    ),
    (
        "shared/goyaml/src/text.rs",
        "use crate::emit::to_string;",
        "crate::emit::to_string",
    ),
    // create-file: nothing calls back into options; create not into edit.
    (
        "plugins/create-file/src/create.rs",
        "use crate::options::CreateStep;",
        "crate::options::CreateStep",
    ),
    (
        "plugins/create-file/src/create.rs",
        "fn f() { crate::edit::run(); }",
        "crate::edit::run",
    ),
    (
        "plugins/create-file/src/edit/text.rs",
        "use super::super::options::X;",
        "crate::options::X",
    ),
    (
        "plugins/run-pod/src/attach.rs",
        "use crate::options::RunPodOptions;",
        "crate::options::RunPodOptions",
    ),
    // rolling-update's core stays behind its seams.
    (
        "plugins/rolling-update/src/handover.rs",
        "use crate::cluster::is_transient;",
        "crate::cluster::is_transient",
    ),
    (
        "plugins/rolling-update/src/handover.rs",
        "use kube::api::{Api, PostParams};",
        "kube::api::Api",
    ),
    (
        "plugins/rolling-update/src/prepare.rs",
        "fn f(_: kube::Client) {}",
        "kube::Client",
    ),
    (
        "plugins/rolling-update/src/updater.rs",
        "use crate::cluster::KubeOps;",
        "crate::cluster::KubeOps",
    ),
];

#[test]
fn the_bottom_modules_and_the_plugins_names_across_their_seams_are_reported() {
    for &(rel, source, named) in BELOW_THEIR_SEAMS {
        let layer = LAYERS
            .iter()
            .find(|l| rel.starts_with(l.dir))
            .unwrap_or_else(|| panic!("{rel}: no layer"));
        let problems = layering(rel, source, layer);
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains(&format!("`{named}`"))),
            "{rel}: {source}: {:?}",
            messages(&problems)
        );
    }
}

/// Names that go down the layers: the file and its source.
const DOWNWARD: &[(&str, &str)] = &[
    ("shared/apiclient/src/error.rs", "use crate::tls::TlsError;"),
    (
        "shared/apiclient/src/kubeconfig/loader.rs",
        "use crate::credentials::policy::PluginPolicy;\nuse crate::home::dir;",
    ),
    (
        "plugins/rolling-update/src/handover.rs",
        "use crate::controller::name;\nuse kube::api::DeleteParams;",
    ),
    (
        "plugins/create-file/src/create.rs",
        "use crate::order::barrier;",
    ),
];

#[test]
fn downward_names_of_the_bottom_modules_and_the_plugins_are_clean() {
    for &(rel, source) in DOWNWARD {
        let layer = LAYERS
            .iter()
            .find(|l| rel.starts_with(l.dir))
            .expect("a layer");
        assert_eq!(
            messages(&layering(rel, source, layer)),
            Vec::<String>::new(),
            "{rel}"
        );
    }
}

/// A function of `body_lines` lines between its `fn` line and its closing brace.
fn function_of(body_lines: usize) -> String {
    let body: String = (0..body_lines)
        .map(|i| format!("    let _x{i} = {i};\n"))
        .collect();
    format!("//! A module.\n\nfn long() {{\n{body}}}\n")
}

#[test]
fn a_function_over_100_lines_is_reported_where_the_rule_holds() {
    let over = function_of(length::MAX_LINES - 1);
    let problems = length::check("plugins/run-pod/src/options.rs", &over);
    assert_eq!(
        messages(&problems),
        [
            "plugins/run-pod/src/options.rs:3: [function-length] `long` spans 101 lines, over 100 (split it along its steps)"
        ]
    );
    let at = function_of(length::MAX_LINES - 2);
    assert!(length::check("plugins/run-pod/src/options.rs", &at).is_empty());
    // Methods, trait defaults and nested functions count too.
    let method = format!("impl X {{\n{}\n}}", over.replace("//! A module.\n", ""));
    assert_eq!(length::check("shared/cli/src/x.rs", &method).len(), 1);
    let default = format!("trait T {{\n{}\n}}", over.replace("//! A module.\n", ""));
    assert_eq!(length::check("shared/cli/src/x.rs", &default).len(), 1);
    for rel in [
        "plugins/a.rs",
        "shared/b.rs",
        "xtask/src/c.rs",
        "tests/src/d.rs",
    ] {
        assert!(length::applies(rel), "{rel}");
    }
    for rel in ["tests/e2e/run_pod.rs", "fuzz/fuzz_targets/yaml.rs"] {
        assert!(!length::applies(rel), "{rel}");
    }
}

#[test]
fn rust_comments_say_what_a_thing_is_not_its_work_item_number() {
    let text = "//! The matrix (issue 32).\nfn f() {\n    // see issue 7\n    let issue_7 = \"issue 9\";\n}\n";
    let problems = comment_citations("xtask/src/bench/x.rs", text);
    assert_eq!(
        problems.iter().map(|p| p.line).collect::<Vec<_>>(),
        [1, 3],
        "{:?}",
        messages(&problems)
    );
    assert!(comment_citations("xtask/src/tidy/tests.rs", text).is_empty());
}

/// A workspace of one library crate, `cli`, for the strict citation rule.
fn cited_tree() -> tempfile::TempDir {
    tree(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"shared/cli\"]\n"),
        ("shared/cli/Cargo.toml", "[package]\nname = \"cli\"\n"),
        (
            "shared/cli/src/lib.rs",
            "//! x\npub mod flags;\nmod skeleton;\npub use skeleton::run;\n",
        ),
        (
            "shared/cli/src/flags/mod.rs",
            "//! x\npub struct ConfigFlags;\nimpl ConfigFlags { pub fn client(&self) {} }\n",
        ),
        ("shared/cli/src/skeleton.rs", "//! x\npub fn run() {}\n"),
        ("plugins/run-pod/src/main.rs", "//! x"),
    ])
}

#[test]
fn the_docs_a_reader_starts_from_cite_only_paths_and_modules_that_exist() {
    let dir = cited_tree();
    let root = dir.path();
    let index = citations::Index::scan(root).expect("scanned");
    let planted = [
        // A path whose first part exists nowhere: the lax rule let it through.
        ("`resource/builtin.rs`", "`resource/builtin.rs`"),
        // A module path written with slashes.
        ("`cli/skeleton` starts it", "`cli/skeleton`"),
        ("`flags/gone.rs`", "`flags/gone.rs`"),
        ("a bare `gone.rs`", "`gone.rs`"),
        // Module paths of a workspace crate.
        ("`cli::nothing`", "`cli` has no `nothing`"),
        ("`cli::flags::Gone`", "`cli::flags` has no `Gone`"),
        ("`cli::flags::ConfigFlags::nope`", "never names `nope`"),
    ];
    for (text, named) in planted {
        let problems = citations::check(root, &index, "ARCHITECTURE.md", text);
        assert_eq!(problems.len(), 1, "{text}: {:?}", messages(&problems));
        assert!(
            problems[0].rule == Rule::DocCitation && problems[0].message.contains(named),
            "{text}: {:?}",
            messages(&problems)
        );
    }
    let clean = "`shared/cli/src/skeleton.rs`, `main.rs`, `Cargo.toml`, `cli::run`, \
        `cli::flags`, `cli::flags::ConfigFlags::client`, `cli::run(&PLUGIN, body)`, \
        `kube::Client`, Go's `text/template` and `net/http`, `batch/v1`, \
        `deployment/apps.v1`, `sigs.k8s.io/yaml`, `application/yaml`, `pods/attach`, \
        `kubeplug/0.1.0`, `/usr/lib/cni`, `~/.kube/config`, `<cache-dir>/kubeplug/`, \
        kubectl's `envvar.go`, `configmap/<unknown>`.";
    assert_eq!(
        messages(&citations::check(root, &index, "README.md", clean)),
        Vec::<String>::new()
    );
    // From a plugin's README, its own `src/` is where relative paths start.
    assert_eq!(
        messages(&citations::check(
            root,
            &index,
            "plugins/run-pod/README.md",
            "`src/main.rs`"
        )),
        Vec::<String>::new()
    );
    for rel in [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "docs/ci-time.md",
        "plugins/run-pod/README.md",
        "shared/cli/README.md",
    ] {
        assert!(citations::is_strict(rel), "{rel}");
    }
    for rel in [
        "bench/runs/2026-11-28-0006/results.md",
        "docs/x/y.md",
        "fuzz/README.md",
    ] {
        assert!(!citations::is_strict(rel), "{rel}");
    }
}

#[test]
fn the_e2e_module_list_matches_the_files_of_tests_e2e() {
    let main = "//! The suites:\n//! - `a`: one.\n//! - `gone`: removed.\n\nmod a;\nmod b;\n";
    let dir = tree(&[
        ("tests/e2e/main.rs", main),
        ("tests/e2e/a.rs", "//! a"),
        ("tests/e2e/b.rs", "//! b"),
        ("tests/e2e/c.rs", "//! c"),
    ]);
    let problems = messages(&citations::e2e_module_list(dir.path()).expect("checked"));
    assert_eq!(problems.len(), 3, "{problems:#?}");
    for expected in [
        "`tests/e2e/c.rs` is not a `mod`",
        "module `b` is missing from the `//!` list",
        "names `gone`, which is not a module",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{expected}: {problems:#?}"
        );
    }
    let clean = "//! The suites:\n//! - `a`: one.\n//! - `b`: two.\n\nmod a;\nmod b;\n";
    std::fs::write(dir.path().join("tests/e2e/main.rs"), clean).expect("write");
    std::fs::remove_file(dir.path().join("tests/e2e/c.rs")).expect("rm");
    assert_eq!(
        messages(&citations::e2e_module_list(dir.path()).expect("checked")),
        Vec::<String>::new()
    );
}

#[test]
fn a_library_crate_s_readme_names_every_module() {
    let dir = tree(&[
        ("shared/core/README.md", "# core\n\n- `cli`: the edge.\n"),
        ("shared/core/src/lib.rs", "//! x"),
        ("shared/core/src/cli.rs", "//! x"),
        ("shared/core/src/waiting.rs", "//! x"),
        ("shared/core/src/tests.rs", "//! x"),
        ("shared/bare/src/lib.rs", "//! x"),
        ("shared/bare/src/only.rs", "//! x"),
    ]);
    let problems = messages(&crate_readmes(dir.path()).expect("checked"));
    assert_eq!(
        problems,
        [
            "shared/bare/README.md: [code-map] does not name module `only` (shared/bare/src/only) of its crate",
            "shared/core/README.md: [code-map] does not name module `waiting` (shared/core/src/waiting) of its crate",
        ]
    );
    std::fs::write(
        dir.path().join("shared/core/README.md"),
        "# core\n\n- `cli`: the edge.\n- `waiting`: why.\n",
    )
    .expect("write");
    std::fs::remove_file(dir.path().join("shared/bare/src/only.rs")).expect("rm");
    assert_eq!(
        messages(&crate_readmes(dir.path()).expect("checked")),
        Vec::<String>::new()
    );
}

#[test]
fn xtask_production_code_is_counted_without_its_tests_and_held_to_8000_lines() {
    let text = "//! A module.\nfn a() {}\n\n#[cfg(test)]\nmod tests;\n\n#[cfg(test)]\n#[allow(dead_code)]\nmod inline {\n    fn t() {}\n}\nfn b() {}\n";
    // 12 lines, of which the two test items span 2 and 5.
    assert_eq!(size::production_lines("xtask/src/a.rs", text), 5);
    assert_eq!(size::production_lines("xtask/src/a/tests.rs", text), 0);
    assert_eq!(size::production_lines("xtask/src/tests/b.rs", text), 0);
    assert_eq!(size::production_lines("bench/src/a.rs", text), 0);
    assert_eq!(size::check(size::MAX_LINES), None);
    assert_eq!(
        size::check(size::MAX_LINES + 1)
            .map(|p| p.to_string())
            .as_deref(),
        Some(
            "xtask/src: [size] xtask's production code is 8001 lines, over 8000 (move a concept that became a product of its own into a package)"
        )
    );
    // Today's tree is within it.
    let root = crate::paths::project_root();
    let total: usize = rust_files(&root)
        .expect("the tree")
        .iter()
        .map(|rel| size::production_lines(rel, &read(&root, rel).expect("read")))
        .sum();
    assert!(total <= size::MAX_LINES, "{total}");
}
