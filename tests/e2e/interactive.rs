//! `kubectl run-pod` on a real pseudo-terminal beside `kubectl run`: the
//! same keystrokes, typed with pauses into a shell that runs the command as a user's
//! shell does (`sh -c '…; echo rc=$?; read line; echo got=$line'`), must leave the
//! same bytes on the terminal. The line typed after the command ended must reach
//! that shell: a plugin that keeps reading the terminal after its session swallowed
//! it, and stayed in the foreground until Enter.
//!
//! Each case runs once with `kubectl run` and once with `kubectl run-pod`, at the
//! same time, each in a namespace of its own; the namespace is the only text
//! normalised. The containers run busybox's `sh` on the real node, on a terminal the
//! kubelet's runtime gives them, with `PS1` set so its prompt is known.

use std::time::Duration;

use localcluster::steering::{self, Readiness};

use crate::terminal::Typist;

/// One thing the person at the terminal does.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Waits until the text is on the terminal (after what the last wait saw).
    Wait(&'static str),
    /// Types the keys, one at a time.
    Type(&'static str),
    /// Does nothing for a while (ms).
    Pause(u64),
    /// Waits until the command has made the terminal raw: keys typed before that are
    /// echoed by the terminal, and the transcript would depend on the machine's speed.
    Raw,
    /// Resizes the window (columns, rows).
    Resize(u16, u16),
    /// Waits, outside the terminal, for pod NAME of the case's namespace to be Ready
    /// (with `--quiet` nothing on the terminal says the session has started).
    PodReady(&'static str),
    /// Creates a file in the running container of pod NAME (`kubectl exec … touch`):
    /// the container's script waits for it, so that it ends when the test says and
    /// not after a `sleep` that a loaded machine outruns.
    Touch(&'static str, &'static str),
}

use Step::{Pause, PodReady, Raw, Resize, Touch, Type, Wait};

/// The prompt of the container's shell (`--env=PS1=…`), and a pod that is ready a
/// second after its shell started: by then the shell has printed its first prompt,
/// which no attach sees (as on a real cluster, where it is the reason for kubectl's
/// hint); a shell slower than the attach would print it into the session.
const PS1: &str = "--env=PS1=pod# ";
const SETTLED: &str = "<ready after 1 s>";
/// Markers, like [`SETTLED`], that [`Case::new`] makes a readiness probe of (see
/// [`probed`]): never ready, and ready after 5 s.
const NEVER_READY: &str = "<never ready>";
const AFTER_5S: &str = "<ready after 5 s>";
const PROMPT: &str = "pod# ";
/// A new prompt once the shell is ready for keys: busybox's line editor prints the
/// prompt and then asks the terminal where its cursor is (`ESC[6n`), but only when no
/// typed key is waiting; keys typed before the question would change the bytes on
/// the terminal, so the steps wait for it before they type.
const READY: &str = "pod# \x1b[6n";
/// The prompt the shell prints after an Enter, ready for keys.
const AFTER_ENTER: &str = "\r\npod# \x1b[6n";
const HINT: &str = "If you don't see a command prompt, try pressing enter.\r\n";
/// kubectl 1.37's warning before the hint.
const RECORDED: &str = "All commands and output from this session will be recorded in container logs, including credentials and sensitive information passed through the command prompt.\r\n";

/// A fresh `-it` session: the hint, the terminal raw, a pause, Enter, the prompt.
const ENTER_SESSION: [Step; 5] = [Wait(HINT), Raw, Pause(300), Type("\r"), Wait(READY)];

struct Case {
    /// The arguments after `kubectl run -n NS` / `kubectl run-pod -n NS`.
    args: &'static [&'static str],
    /// Text piped into the command (`printf %s TEXT | kubectl …`) instead of the terminal.
    pipe: Option<&'static str>,
    /// The terminal's size at the start (columns, rows).
    size: (u16, u16),
    steps: Vec<Step>,
    /// The command's exit code, as its shell reports it.
    rc: i32,
    /// Texts the transcript must hold (beyond being kubectl's).
    shows: &'static [&'static str],
}

impl Case {
    fn new(args: &'static [&'static str], steps: Vec<Step>, rc: i32) -> Self {
        Case {
            args: probed(args),
            pipe: None,
            size: (100, 30),
            steps,
            rc,
            shows: &[],
        }
    }
}

/// `args` with each readiness marker ([`SETTLED`], [`NEVER_READY`], [`AFTER_5S`])
/// replaced by the `--overrides` that give the pod's container that readiness probe
/// (kubectl and run-pod name the container as the pod: the first argument that is no
/// flag).
fn probed(args: &'static [&'static str]) -> &'static [&'static str] {
    let readiness = |arg: &str| match arg {
        SETTLED => Some(Readiness::AfterSecs(1)),
        NEVER_READY => Some(Readiness::Never),
        AFTER_5S => Some(Readiness::AfterSecs(5)),
        _ => None,
    };
    if !args.iter().any(|a| readiness(a).is_some()) {
        return args;
    }
    let name = args
        .iter()
        .take_while(|a| **a != "--")
        .find(|a| !a.starts_with('-'))
        .expect("a pod name");
    let mut out: Vec<&'static str> = Vec::new();
    for arg in args {
        match readiness(arg).and_then(Readiness::probe) {
            Some(probe) => {
                out.extend(steering::run_pod_probe(name, probe).map(|a| &*String::leak(a)))
            }
            None => out.push(arg),
        }
    }
    out.leak()
}

/// Single quotes for `sh`.
fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Runs `case` with `kubectl SUBCOMMAND -n NS …` in its shell; returns the
/// transcript with the namespace replaced by `NS`.
fn run(case: &Case, subcommand: &str, ns: &str) -> String {
    run_until(case, subcommand, ns, &format!("rc={}\r\n", case.rc))
}

/// [`run`], the command's end recognised by `end` (its `rc=N` line).
fn run_until(case: &Case, subcommand: &str, ns: &str, end: &str) -> String {
    let mut command = format!("kubectl {subcommand} -n {ns}");
    for arg in case.args {
        command.push(' ');
        command.push_str(&quote(arg));
    }
    if let Some(input) = case.pipe {
        command = format!("printf '%s\\n' {} | {command}", quote(input));
    }
    // The shell outlives a Ctrl-C that reaches the command, as an interactive one does.
    let script = format!("trap : INT; {command}; echo rc=$?; read line; echo got=$line");
    let mut typist = Typist::start(&script, case.size.0, case.size.1, &[]);
    for step in &case.steps {
        match *step {
            Wait(text) => typist.wait_for(text),
            Type(keys) => typist.type_keys(keys),
            Pause(ms) => std::thread::sleep(Duration::from_millis(ms)),
            Resize(cols, rows) => typist.resize(cols, rows),
            PodReady(name) => pod_ready(ns, name),
            Touch(name, path) => touch(ns, name, path),
            Raw => typist.wait_raw(),
        }
    }
    // The command has ended: what is typed now belongs to the user's shell.
    typist.wait_for(end);
    typist.type_keys("hello\r");
    typist.wait_for("got=hello\r\n");
    let (code, transcript) = typist.finish();
    let shown = no_redraws(&String::from_utf8_lossy(&transcript).replace(ns, "NS"));
    assert_eq!(
        code,
        Some(0),
        "{subcommand}: the shell's exit code; it shows {shown:?}"
    );
    shown
}

/// `transcript` without the prompt redraws (`\rpod# ESC[J`, ash's answer to a
/// SIGWINCH). Both commands send the terminal's size twice as they attach (one
/// larger, then the real one: kubectl's redraw trick); whether the shell redraws
/// none, once or twice depends on whether its line editor was already waiting when
/// the signals came and how close together the kernel delivered them: the
/// machine's timing, not the command's output (at a load of 30, kubectl's run
/// showed no redraw where run-pod's showed one). That the size itself arrives is
/// what the `stty size` of a resized session checks.
fn no_redraws(transcript: &str) -> String {
    transcript.replace(&format!("\r{PROMPT}\x1b[J"), "")
}

fn touch(ns: &str, name: &str, path: &str) {
    let out = tests::harness::cluster()
        .kubectl()
        .args(["exec", "-n", ns, name, "--", "touch", path])
        .run();
    // 137: the touch made the file, the container's script saw it and ended, and the
    // runtime killed what was left in the container, the exec's own process among
    // them, before the exec had returned (seen at a load of 15). The case's checks of
    // the container's exit code still fail if the container ended for another reason.
    assert!(
        out.code == 0 || out.code == 137,
        "touch {path} in pod {name}: {} {}",
        out.code,
        out.stderr
    );
}

fn pod_ready(ns: &str, name: &str) {
    // `kubectl wait` fails at once on a pod that is not there yet.
    let deadline = std::time::Instant::now() + crate::terminal::WAIT;
    loop {
        let out = tests::harness::cluster()
            .kubectl()
            .args(["wait", "-n", ns, "--for=condition=Ready", "--timeout=60s"])
            .arg(format!("pod/{name}"))
            .run();
        if out.code == 0 {
            return;
        }
        assert!(
            out.stderr.contains("NotFound") && std::time::Instant::now() < deadline,
            "pod {name} never ready: {}",
            out.stderr
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs `case` with kubectl and with the plugin and compares the terminals.
async fn beside_kubectl(test: &str, case: Case) {
    let cluster = tests::harness::cluster();
    let theirs_ns = cluster.namespace(&format!("{test}-kubectl")).await;
    let ours_ns = cluster.namespace(test).await;
    let case = std::sync::Arc::new(case);
    let (theirs, ours) = {
        let (c1, c2) = (case.clone(), case.clone());
        let (n1, n2) = (theirs_ns.name.clone(), ours_ns.name.clone());
        let theirs = tokio::task::spawn_blocking(move || run(&c1, "run", &n1));
        let ours = tokio::task::spawn_blocking(move || run(&c2, "run-pod", &n2));
        (
            theirs.await.expect("kubectl's run"),
            ours.await.expect("run-pod's run"),
        )
    };
    for text in case.shows {
        assert!(ours.contains(text), "no {text:?} in {ours:?}");
    }
    assert_eq!(
        lines(&ours),
        lines(&theirs),
        "run-pod's terminal (left) differs from kubectl's (right)"
    );
}

/// A transcript split after each line feed, so that a difference names its line.
fn lines(transcript: &str) -> Vec<&str> {
    transcript.split_inclusive('\n').collect()
}

/// `--pod-running-timeout` of the sessions that end detached: it bounds the wait for
/// the pod to start, which took more than 5 s at a load of 30, and then the wait for
/// the exit code of a shell left running, whose timeout the cases show.
const DETACHED_TIMEOUT: &str = "--pod-running-timeout=15s";

const IT_RM: &[&str] = &[
    "-it",
    "--rm",
    "shell",
    "--image=busybox",
    "--restart=Never",
    PS1,
    SETTLED,
    "--",
    "sh",
];

#[tokio::test]
async fn it_rm_exit_code_comes_back_and_the_shell_gets_the_next_line() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.extend([
        Type("echo hi\r"),
        Wait("hi\r\n"),
        Wait(READY),
        Type("exit 3\r"),
    ]);
    let mut case = Case::new(IT_RM, steps, 3);
    case.shows = &[
        "pod \"shell\" deleted from NS namespace\r\npod NS/shell terminated (Error)\r\nrc=3\r\n",
        "got=hello",
    ];
    beside_kubectl("pty-exit", case).await;
}

#[tokio::test]
async fn it_rm_ctrl_d_ends_the_shell() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.push(Type("\x04"));
    let mut case = Case::new(IT_RM, steps, 0);
    case.shows = &["pod \"shell\" deleted from NS namespace\r\nrc=0\r\n"];
    beside_kubectl("pty-ctrl-d", case).await;
}

#[tokio::test]
async fn ctrl_c_goes_to_the_shell_in_the_pod() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.extend([
        Type("sleep 30\r"),
        Wait("sleep 30\r\n"),
        Pause(800),
        Type("\x03"),
        Wait(READY),
        Type("exit 4\r"),
    ]);
    let mut case = Case::new(IT_RM, steps, 4);
    case.shows = &["pod NS/shell terminated (Error)\r\nrc=4\r\n"];
    beside_kubectl("pty-ctrl-c", case).await;
}

#[tokio::test]
async fn it_without_rm_leaves_the_pod_and_reports_its_exit() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.push(Type("exit 5\r"));
    let case = Case::new(
        &[
            "-it",
            "shell",
            "--image=busybox",
            "--restart=Never",
            PS1,
            SETTLED,
            "--",
            "sh",
        ],
        steps,
        5,
    );
    beside_kubectl("pty-no-rm", case).await;
}

#[tokio::test]
async fn session_ended_tells_how_to_resume() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.push(Type("exit\r"));
    let mut case = Case::new(
        &[
            "-it",
            "shell",
            "--image=busybox",
            "--restart=Always",
            PS1,
            SETTLED,
            "--",
            "sh",
        ],
        steps,
        0,
    );
    case.shows = &[
        RECORDED,
        "Session ended, resume using 'kubectl attach shell -c shell -n NS -i -t' command\r\n",
    ];
    beside_kubectl("pty-resume", case).await;
}

#[tokio::test]
async fn window_size_reaches_the_pod_before_and_during_the_session() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.extend([
        Type("stty size\r"),
        Wait("30 100\r\n"),
        Wait(READY),
        Resize(90, 20),
        Pause(500),
        Type("stty size\r"),
        Wait("20 90\r\n"),
        Wait(READY),
        Type("exit\r"),
    ]);
    let case = Case::new(IT_RM, steps, 0);
    beside_kubectl("pty-resize", case).await;
}

#[tokio::test]
async fn quiet_says_nothing_but_the_pod_s_words() {
    // The shell's first prompt is replayed from the log before the attach: the one
    // to wait for follows the Enter.
    let steps = vec![
        PodReady("shell"),
        Raw,
        Pause(300),
        Type("\r"),
        Wait(AFTER_ENTER),
        Type("exit 3\r"),
    ];
    let mut case = Case::new(
        &[
            "-it",
            "--rm",
            "-q",
            "shell",
            "--image=busybox",
            "--restart=Never",
            PS1,
            SETTLED,
            "--",
            "sh",
        ],
        steps,
        3,
    );
    case.shows = &["pod NS/shell terminated (Error)\r\nrc=3\r\n"];
    beside_kubectl("pty-quiet", case).await;
}

const I_RM: &[&str] = &[
    "-i",
    "--rm",
    "q",
    "--image=busybox",
    "--restart=Never",
    "--",
    "sh",
];

#[tokio::test]
async fn stdin_from_a_pipe_without_a_tty() {
    let mut case = Case::new(I_RM, vec![Wait("hi\r\n")], 3);
    case.pipe = Some("echo hi; exit 3");
    case.shows = &["pod NS/q terminated (Error)\r\nrc=3\r\n"];
    beside_kubectl("pty-pipe", case).await;
}

#[tokio::test]
async fn stdin_from_the_terminal_without_a_tty() {
    // The terminal stays cooked: it echoes the line, the pod's shell answers it.
    let steps = vec![
        Wait(HINT),
        Pause(800),
        Type("echo hi\r"),
        Wait("hi\r\nhi\r\n"),
        Type("exit 3\r"),
    ];
    let mut case = Case::new(I_RM, steps, 3);
    case.shows = &["pod NS/q terminated (Error)\r\nrc=3\r\n"];
    beside_kubectl("pty-i", case).await;
}

#[tokio::test]
async fn ctrl_d_on_the_terminal_is_end_of_file() {
    let steps = vec![
        Wait(HINT),
        Pause(800),
        Type("echo hi\r"),
        Wait("hi\r\nhi\r\n"),
        Type("\x04"),
    ];
    let case = Case::new(I_RM, steps, 0);
    beside_kubectl("pty-i-eof", case).await;
}

#[tokio::test]
async fn a_pod_that_never_starts_times_out() {
    let case = Case::new(
        &[
            "-i",
            "--rm",
            "q",
            "--image=busybox",
            "--restart=Never",
            "--pod-running-timeout=3s",
            NEVER_READY,
            "--",
            "sh",
        ],
        vec![],
        1,
    );
    beside_kubectl("pty-never-ready", case).await;
}

#[tokio::test]
async fn a_pod_that_already_exited_shows_its_logs() {
    // Ready only long after its process ended: the commands find it finished (else
    // whether they attach in time would decide what they print).
    let mut case = Case::new(
        &[
            "-it",
            "--rm",
            "q",
            "--image=busybox",
            "--restart=Never",
            AFTER_5S,
            "--",
            "sh",
            "-c",
            "echo bye; exit 3",
        ],
        vec![],
        3,
    );
    // The kubelet's log of a terminal keeps its lines without the terminal's `\r`.
    case.shows = &["bye\r\n"];
    beside_kubectl("pty-exited", case).await;
}

#[tokio::test]
async fn attach_false_only_creates() {
    let case = Case::new(
        &[
            "-i",
            "--attach=false",
            "q",
            "--image=busybox",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "sleep 1",
        ],
        vec![],
        0,
    );
    beside_kubectl("pty-no-attach", case).await;
}

/// A fresh namespace holding the ReplicationController `web` of 3 ready pods whose
/// replacements each take 2 s to become ready: an update of it lasts long enough to
/// be interrupted, its bar drawn.
async fn slow_web_rc(prefix: &str) -> tests::harness::TestNamespace {
    use crate::rolling_update::{OLD_IMAGE, create_ready, rc};
    use k8s_openapi::api::core::v1::ReplicationController;
    let cluster = tests::harness::cluster();
    let ns = cluster.namespace(prefix).await;
    let rcs: kube::Api<ReplicationController> =
        kube::Api::namespaced(cluster.client().await, ns.as_str());
    create_ready(
        &rcs,
        &rc(
            "web",
            "web",
            &[],
            &[("c", OLD_IMAGE)],
            3,
            Readiness::AfterSecs(2),
        ),
    )
    .await;
    ns
}

/// rolling-update's bar on a terminal, stopped by Ctrl-C in the middle: it stops,
/// says how to resume, exits 130, and leaves the terminal as it found it (`stty -a`
/// the same before and after). kubectl 1.32 has no rolling-update to compare with.
#[tokio::test]
async fn ctrl_c_during_rolling_update_leaves_the_terminal_sane() {
    let ns = slow_web_rc("pty-ru").await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let (before, after) = (dir.path().join("before"), dir.path().join("after"));
    // The shell traps SIGINT so that it outlives the Ctrl-C and can look at the
    // terminal afterwards; the plugin gets the signal's default disposition back.
    let script = format!(
        "trap 'echo trapped' INT; stty -a > {before}; \
         kubectl rolling-update -n {ns} web web-v2 --image={NEW} --update-period=0; \
         echo rc=$?; stty -a > {after}; read line; echo got=$line",
        before = before.display(),
        after = after.display(),
        ns = ns.as_str(),
        NEW = crate::rolling_update::NEW_IMAGE,
    );
    let transcript = tokio::task::spawn_blocking(move || {
        let mut typist = Typist::start(&script, 100, 30, &[]);
        // The bar is drawing once the new controller has a pod.
        typist.wait_for("new 1/3");
        typist.type_keys("\x03");
        typist.wait_for("rc=130\r\n");
        typist.type_keys("hello\r");
        typist.wait_for("got=hello\r\n");
        typist.finish()
    })
    .await
    .expect("the terminal's run");
    let shown = String::from_utf8_lossy(&transcript.1).into_owned();
    assert_eq!(transcript.0, Some(0), "{shown:?}");
    assert!(shown.contains("interrupted by SIGINT"), "{shown:?}");
    let (before, after) = (
        std::fs::read_to_string(&before).expect("stty -a before"),
        std::fs::read_to_string(&after).expect("stty -a after"),
    );
    assert!(
        before.contains("icanon") && before.contains(" echo"),
        "{before}"
    );
    assert_eq!(after, before, "stty -a after the interrupted update");
}

/// Runs `command` in a shell on a terminal of [`CTRL_C_COLUMNS`], presses Ctrl-C once
/// `shown` is on it, and returns the screen once the command has ended with 130.
/// The terminal echoes `^C` where the cursor is, before the plugin hears of it.
fn ctrl_c_once(command: &str, shown: &'static str) -> Vec<String> {
    let script = format!("trap : INT; {command}; echo rc=$?");
    let mut typist = Typist::start(&script, CTRL_C_COLUMNS, 30, &[]);
    typist.wait_for(shown);
    typist.type_keys("\x03");
    typist.wait_for("rc=130\r\n");
    let (code, transcript) = typist.finish();
    let screen = crate::terminal::screen(&transcript, CTRL_C_COLUMNS.into());
    assert_eq!(code, Some(0), "{screen:#?}");
    screen
}

const CTRL_C_COLUMNS: u16 = 100;

/// rolling-update's bar, stopped by Ctrl-C: the bar goes, and the `^C` echoed on it
/// with it, before the error and the hint; the last classic line stays just above
/// them.
#[tokio::test]
async fn ctrl_c_during_rolling_update_clears_the_bar_and_its_echo() {
    use crate::rolling_update::NEW_IMAGE;
    let ns = slow_web_rc("pty-ru-bar").await;
    let command = format!(
        "kubectl rolling-update -n {ns} web web-v2 --image={NEW_IMAGE} --update-period=0",
        ns = ns.as_str()
    );
    let screen = tokio::task::spawn_blocking(move || ctrl_c_once(&command, "new 1/3"))
        .await
        .expect("the terminal's run");
    assert!(
        !screen
            .iter()
            .any(|l| l.contains("[00:") || l.contains("^C")),
        "the bar or its ^C left behind: {screen:#?}"
    );
    let error = screen
        .iter()
        .position(|l| l == "error: interrupted by SIGINT")
        .unwrap_or_else(|| panic!("no error line: {screen:#?}"));
    assert!(
        error > 0 && screen[error - 1].starts_with("Scaling web"),
        "{screen:#?}"
    );
    assert_eq!(
        screen.last().map(String::as_str),
        Some("rc=130"),
        "{screen:#?}"
    );
}

/// create-file `--wait`'s status line, stopped by Ctrl-C: the screen holds what
/// was created, the error and the hint, and nothing of the line or its `^C`.
#[tokio::test]
async fn ctrl_c_during_create_file_wait_clears_the_status_line() {
    let cluster = tests::harness::cluster();
    let ns = cluster.namespace("pty-wait-line").await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("slow.json");
    // Pods that are not ready within the test: the wait is still on when Ctrl-C comes.
    let deployment = serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "slow"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "slow"}},
            "template": {
                "metadata": {"labels": {"app": "slow"}},
                "spec": {"containers": [{
                    "name": "slow",
                    "image": "nginx:1.27",
                    "readinessProbe": steering::never_ready(),
                }]}
            }
        }
    });
    std::fs::write(&file, deployment.to_string()).expect("the manifest");
    let command = format!(
        "kubectl create-file -n {ns} -f {file} --wait",
        ns = ns.as_str(),
        file = file.display()
    );
    let screen = tokio::task::spawn_blocking(move || ctrl_c_once(&command, "0/1 ready"))
        .await
        .expect("the terminal's run");
    assert_eq!(
        screen,
        [
            "deployment.apps/slow created",
            "error: interrupted by SIGINT",
            "The created objects stay; nothing was deleted.",
            "rc=130",
        ],
        "{screen:#?}"
    );
}

#[tokio::test]
async fn attach_without_stdin_shows_the_output() {
    let mut case = Case::new(
        &[
            "--attach",
            "--rm",
            "q",
            "--image=busybox",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "sleep 6; echo done; exit 2",
        ],
        vec![],
        2,
    );
    case.shows = &["done\r\n"];
    beside_kubectl("pty-attach", case).await;
}

#[tokio::test]
async fn a_tty_asked_for_with_stdin_from_a_pipe() {
    // The pod gets its terminal; the attach asks for none (stdin is no terminal) but
    // for stderr, which the kubelet, holding to the container's own terminal, turns
    // into a terminal attach with stderr: containerd refuses it. kubectl falls back
    // to the log so far (empty), and so does run-pod; the piped text never reaches
    // the container, whose exit code comes back. The container runs until the
    // command has said the refusal: after a fixed `sleep 2`, a loaded machine let
    // kubectl meet the container already gone (`container shell not found`).
    let mut case = Case::new(
        &[
            "-it",
            "--rm",
            "shell",
            "--image=busybox",
            "--restart=Never",
            "--",
            "sh",
            "-c",
            "until [ -e /tmp/end ]; do sleep 0.1; done; exit 3",
        ],
        vec![
            Wait("falling back to streaming logs"),
            Touch("shell", "/tmp/end"),
        ],
        3,
    );
    case.pipe = Some("echo piped");
    // Both try SPDY after the WebSocket attach failed, and say SPDY's refusal.
    case.shows = &[
        "Unable to use a TTY - input is not a terminal or the right kind of file\r\n",
        "warning: couldn't attach to pod/shell, falling back to streaming logs: unable to upgrade connection: rpc error: code = InvalidArgument desc = tty and stderr cannot both be true\r\n",
    ];
    beside_kubectl("pty-it-pipe", case).await;
}

/// A difference listed in the README: Ctrl-C while the command waits for the pod.
/// kubectl's interrupt handler exits 1 at once and leaves the pod `--rm` promised to
/// delete; run-pod deletes it and exits 130.
#[tokio::test]
async fn ctrl_c_while_waiting_for_the_pod_still_removes_it() {
    let cluster = tests::harness::cluster();
    let theirs_ns = cluster.namespace("pty-wait-int-kubectl").await;
    let ours_ns = cluster.namespace("pty-wait-int").await;
    let case = std::sync::Arc::new(Case::new(
        &[
            "-i",
            "--rm",
            "q",
            "--image=busybox",
            "--restart=Never",
            NEVER_READY,
            "--",
            "sh",
        ],
        vec![Pause(3000), Type("\x03")],
        0,
    ));
    let (c1, c2) = (case.clone(), case.clone());
    let (n1, n2) = (theirs_ns.name.clone(), ours_ns.name.clone());
    let theirs = tokio::task::spawn_blocking(move || run_until(&c1, "run", &n1, "rc=1\r\n"));
    let ours = tokio::task::spawn_blocking(move || run_until(&c2, "run-pod", &n2, "rc=130\r\n"));
    let (theirs, ours) = (
        theirs.await.expect("kubectl's run"),
        ours.await.expect("run-pod's run"),
    );
    assert_eq!(theirs, "^Crc=1\r\nhello\r\ngot=hello\r\n");
    assert_eq!(
        ours,
        "^Cpod \"q\" deleted from NS namespace\r\nrc=130\r\nhello\r\ngot=hello\r\n"
    );
}

/// kubectl 1.36+ replays the container's log before attaching: `first`, written
/// before the attach connected (the pod is ready a second after it started), is not
/// lost (on a terminal; piped in `run_pod_attach.rs`). `second` comes once the
/// attach has brought the typed line: what is written between the log's read and
/// the attach is lost, by kubectl too, so a test must not depend on it.
const FIRST_SECOND: &[&str] = &[
    "--rm",
    "q",
    "--image=busybox",
    "--restart=Never",
    SETTLED,
    "--",
    "sh",
    "-c",
    concat!(
        "echo first; ",
        localcluster::read_line!(),
        "; echo second $x"
    ),
];

#[tokio::test]
async fn output_before_the_attach_is_replayed_with_stdin_on_the_terminal() {
    let args: &'static [&'static str] = [&["-i"][..], FIRST_SECOND].concat().leak();
    let steps = vec![Wait(HINT), Pause(800), Type("go\r"), Wait("second go\r\n")];
    let mut case = Case::new(args, steps, 0);
    case.shows = &["first\r\n", RECORDED];
    beside_kubectl("pty-replay-i", case).await;
}

#[tokio::test]
async fn output_before_the_attach_is_replayed_on_a_raw_terminal() {
    let args: &'static [&'static str] = [&["-it"][..], FIRST_SECOND].concat().leak();
    let steps = vec![
        Wait(HINT),
        Raw,
        Pause(300),
        Type("go\r"),
        Wait("second go\r\n"),
    ];
    let mut case = Case::new(args, steps, 0);
    // The container's terminal writes `\r\n`; the kubelet's log keeps the line
    // without its `\r`, and the user's terminal, not raw while the log is printed,
    // adds its own.
    case.shows = &[
        "first\r\n",
        "Session ended, resume using 'kubectl attach q -c q -n NS -i -t' command\r\n",
    ];
    beside_kubectl("pty-replay-it", case).await;
}

/// The default detach keys, Ctrl-P Ctrl-Q, end the attach of a raw `-it` session,
/// and the session ends as kubectl's does.
#[tokio::test]
async fn ctrl_p_ctrl_q_detaches() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.extend([
        Type("echo hi\r"),
        Wait("hi\r\n"),
        Wait(READY),
        Type("\x10\x11"),
    ]);
    // Detached, the shell runs on (its terminal's input never ends): the wait for its
    // exit code times out, and --rm deletes the pod.
    let args: &'static [&'static str] = [&[DETACHED_TIMEOUT][..], IT_RM].concat().leak();
    let mut case = Case::new(args, steps, 1);
    case.shows = &[
        "Session ended, resume using 'kubectl attach shell -c shell -n NS -i -t' command\r\n",
        "pod \"shell\" deleted from NS namespace\r\n",
    ];
    beside_kubectl("pty-detach", case).await;
}

/// `--detach-keys` of another sequence: Ctrl-P alone is the shell's, and the keys
/// typed are what detaches.
#[tokio::test]
async fn detach_keys_of_the_user_s_choice() {
    let mut steps = ENTER_SESSION.to_vec();
    steps.extend([Type("echo a\x10b\r"), Wait(READY), Type("\x18x")]);
    let args: &'static [&'static str] = [&["--detach-keys=ctrl-x,x", DETACHED_TIMEOUT][..], IT_RM]
        .concat()
        .leak();
    let mut case = Case::new(args, steps, 1);
    case.shows = &["pod \"shell\" deleted from NS namespace\r\n"];
    beside_kubectl("pty-detach-keys", case).await;
}

/// A key name kubectl does not know fails the attach (kubectl binds the keys when
/// it attaches on a raw terminal): its warning, the logs written since, and the wait
/// for the pod's end, which never comes.
#[tokio::test]
async fn unknown_detach_keys_fall_back_to_the_logs() {
    let args: &'static [&'static str] = [&["--detach-keys=ctrl-P", DETACHED_TIMEOUT][..], IT_RM]
        .concat()
        .leak();
    let mut case = Case::new(args, vec![], 1);
    case.shows = &[
        "warning: couldn't attach to pod/shell, falling back to streaming logs: could not bind detach keys: Unknown character: 'ctrl-P'\r\n",
        "error: timed out waiting for the condition\r\n",
    ];
    beside_kubectl("pty-detach-bad", case).await;
}

/// One rule for every comparison: the reference is the kubectl of the server's
/// release. The shell of every case above finds that kubectl first on PATH (the
/// harness puts it there, after the plugins), and a PATH whose first kubectl is
/// another one fails the harness's check.
#[tokio::test]
async fn the_shell_runs_the_release_s_own_kubectl() {
    use std::os::unix::fs::PermissionsExt as _;
    let cluster = tests::harness::cluster();
    let (code, transcript) = tokio::task::spawn_blocking(|| {
        Typist::start("kubectl version --client", 100, 30, &[]).finish()
    })
    .await
    .expect("the terminal's run");
    let shown = String::from_utf8_lossy(&transcript).into_owned();
    assert_eq!(code, Some(0), "{shown:?}");
    if cluster.release != tests::harness::Release::Current {
        // On 1.20.2 the reference is the installed kubectl, the one on PATH anyway.
        return;
    }
    let version = format!("Client Version: {}\r\n", cluster.release.version());
    assert!(shown.contains(&version), "{shown:?}");
    let dir = tempfile::tempdir().expect("temporary directory");
    let other = dir.path().join("kubectl");
    std::fs::write(&other, "#!/bin/sh\necho 'Client Version: v1.32.0'\n").expect("write");
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut paths = vec![dir.path().to_path_buf()];
    paths.extend(std::env::split_paths(&cluster.child_path()));
    let path = std::env::join_paths(paths).expect("PATH");
    let checked = std::panic::catch_unwind(|| cluster.check_kubectl_on(&path));
    assert!(
        checked.is_err(),
        "a PATH with another kubectl first passed the check"
    );
}
