//! Colour on a real terminal: the `Warning:` lines are coloured on a terminal, the
//! `-v` logs never are (klog's lines have no colour), and `NO_COLOR` (any value) or
//! `TERM=dumb` turn every colour off, as kubectl's `term.AllowsColorOutput`; the
//! rolling-update bar, which has no colour, stays but writes no colour codes either.

// A failed terminal or process call is a broken test environment: unwrap says where.
#![allow(clippy::unwrap_used)]

use tests::harness::{Release, cluster};

use crate::terminal;

/// Runs a plugin with stderr on a terminal and stdout on a pipe: the exit code and
/// what the terminal got.
async fn on_terminal(plugin: &str, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let run = terminal::on_terminal(plugin, &args, env, false).await;
    (run.code, String::from_utf8_lossy(&run.screen).into_owned())
}

/// SGR sequences (`ESC [ … m`): colours and text attributes, not cursor movement.
fn colour_codes(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("\x1b[") {
        let after = &rest[start + 2..];
        let len = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[len..].starts_with('m') {
            found.push(&rest[start..start + 2 + len + 1]);
        }
        rest = &rest[start + 2..];
    }
    found
}

/// An object of a deprecated API, which the API server answers with a `Warning`
/// header, and the warning's words: on 1.20 the v1beta1 Role (gone from current
/// servers), on current servers v1 Endpoints (deprecated in 1.33).
pub fn deprecated_object(release: Release) -> (&'static str, &'static str) {
    match release {
        Release::V1_20 => (
            "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: Role\nmetadata:\n  name: NAME\nrules: []\n",
            "rbac.authorization.k8s.io/v1beta1 Role is deprecated in v1.17+, unavailable in v1.22+; use rbac.authorization.k8s.io/v1 Role",
        ),
        Release::Current => (
            "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: NAME\n",
            "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
        ),
    }
}

#[tokio::test]
async fn logs_and_warnings_are_plain_with_no_color_or_a_dumb_terminal() {
    let ns = cluster().namespace("colour").await;
    let (manifest, warning) = deprecated_object(cluster().release);
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |name: &'static str, env: &'static [(&'static str, &'static str)]| {
        let file = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&file, manifest.replace("NAME", name)).expect("write");
        let ns = ns.as_str().to_string();
        async move {
            let file = file.to_string_lossy().into_owned();
            let (code, screen) =
                on_terminal("create-file", &["-f", &file, "-n", &ns, "-v=6"], env).await;
            assert_eq!(code, Some(0), "{screen}");
            // Both kinds of output are there, so their plainness means something.
            assert!(
                screen.contains("Warning:") && screen.contains(warning),
                "{screen}"
            );
            // -v=6 logs each request, as kubectl does (`"Response" verb="POST" url=…
            // status="201 Created" milliseconds=3`).
            assert!(
                screen.contains("] \"Response\" verb=\"POST\"")
                    && screen.contains(" milliseconds="),
                "no -v=6 request logs: {screen}"
            );
            screen
        }
    };

    let coloured = run("coloured", &[]).await;
    assert!(
        coloured.contains("\x1b[33;1mWarning:\x1b[0m"),
        "the warning is bold yellow on a terminal: {coloured:?}"
    );
    // The warning's colour is the only one: the logs are klog's plain lines.
    assert_eq!(
        colour_codes(&coloured),
        ["\x1b[33;1m", "\x1b[0m"],
        "only the warning is coloured: {coloured:?}"
    );

    for (name, env) in [
        ("no-color", &[("NO_COLOR", "1")][..]),
        ("no-color-empty", &[("NO_COLOR", "")][..]),
        ("dumb", &[("TERM", "dumb")][..]),
    ] {
        let plain = run(name, env).await;
        assert!(
            !plain.contains('\x1b'),
            "{name}: escape codes on the terminal: {plain:?}"
        );
    }
}

#[tokio::test]
async fn the_rolling_update_bar_writes_no_colour_under_no_color() {
    let ns = cluster().namespace("colour-ru").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let rc = dir.path().join("rc.yaml");
    std::fs::write(
        &rc,
        "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: bar\nspec:\n  replicas: 1\n  selector:\n    app: bar\n  template:\n    metadata:\n      labels:\n        app: bar\n    spec:\n      containers:\n      - name: c\n        image: registry.k8s.io/pause:3.8\n",
    )
    .expect("write");
    cluster()
        .plugin("create-file")
        .args(["-f", &rc.to_string_lossy(), "-n", ns.as_str()])
        .run()
        .success();
    let (code, screen) = on_terminal(
        "rolling-update",
        &[
            "bar",
            "bar-v2",
            "--image=registry.k8s.io/pause:3.9",
            "--update-period=0",
            "-n",
            ns.as_str(),
            "-v=6",
        ],
        &[("NO_COLOR", "1")],
    )
    .await;
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("round_trippers.go:"),
        "no -v=6 logs: {screen}"
    );
    // The bar was drawn (it erases its line to redraw) …
    assert!(screen.contains("\x1b[2K"), "no progress bar: {screen:?}");
    // … and nothing on the terminal is coloured.
    assert_eq!(colour_codes(&screen), Vec::<&str>::new(), "{screen:?}");
}
