//! The differential harness: for every flag a plugin shares with its kubectl command
//! (the flags of kubectl's own `--help` and `kubectl options`, by long name, found in
//! the plugin's `--help`), command lines generated from classes of values — valid,
//! empty, not a number, overflow, negative, starting with `-`, unicode, a missing
//! file, a directory, a URL that refuses — run through kubectl 1.37 and through the
//! plugin, compared byte for byte: exit code, stdout and stderr (the usage hint's
//! command name swapped, klog's time and process id masked).
//!
//! Cheap on purpose: every line is a client dry run or fails before creating
//! anything. rolling-update has no kubectl 1.37 command, so its lines are the classes
//! that fail while parsing the global flags, beside `kubectl get`, whose parser is
//! the same.
//!
//! The known differences are [`DELIBERATE`], grouped by reason, each group saying
//! whether it is deliberate or not fixed yet; a
//! difference outside it fails the test, and so does an entry that no line shows any
//! more (the list stays true).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use tests::harness::{Output, cluster};

/// A value class, and the words it puts after `--flag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Valid,
    Empty,
    NotANumber,
    Overflow,
    Negative,
    Dash,
    Unicode,
    MissingFile,
    Directory,
    RefusedUrl,
}

/// What a flag takes, read from the default kubectl's help shows for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Bool,
    Number,
    Text,
}

/// `(plugins, flags, classes, reason)`: lines that differ from kubectl, each group for
/// one reason: deliberate, or known and not fixed yet (said so).
/// One group of [`DELIBERATE`]: plugins, flags, classes, reason.
type Known = (
    &'static [&'static str],
    &'static [&'static str],
    &'static [Class],
    &'static str,
);

const DELIBERATE: &[Known] = {
    use Class::*;
    const BOTH: &[&str] = &["create-file", "run-pod"];
    const TEXT: &[Class] = &[Dash, Unicode, MissingFile, Directory, RefusedUrl];
    &[(
        BOTH,
        &["tls-server-name"],
        TEXT,
        "deliberate: a name that is not a DNS name is refused before connecting (rustls verifies against DNS names only); kubectl connects and fails verification",
    )]
};

/// The flags of a `--help` (or `kubectl options`) text: long name → type.
fn flags_of(help: &str) -> BTreeMap<String, Type> {
    let mut flags = BTreeMap::new();
    for line in help.lines() {
        let Some(flag) = line.strip_prefix("    ").filter(|l| l.starts_with('-')) else {
            continue;
        };
        let Some((name, default)) = flag
            .split("--")
            .nth(1)
            .and_then(|f| f.strip_suffix(':'))
            .and_then(|f| f.split_once('='))
        else {
            continue;
        };
        let ty = match default {
            "true" | "false" => Type::Bool,
            d if d.trim_start_matches('-').parse::<i64>().is_ok() => Type::Number,
            _ => Type::Text,
        };
        flags.insert(name.to_string(), ty);
    }
    flags
}

fn classes(ty: Type) -> &'static [Class] {
    use Class::*;
    match ty {
        Type::Bool => &[Valid, Empty, NotANumber, Dash, Unicode],
        Type::Number => &[Valid, Empty, NotANumber, Overflow, Negative, Dash, Unicode],
        Type::Text => &[Empty, Dash, Unicode, MissingFile, Directory, RefusedUrl],
    }
}

/// The words of `--flag` given a value of `class`.
fn words(flag: &str, ty: Type, class: Class, dir: &Path) -> Vec<String> {
    let with = |value: &str| vec![format!("--{flag}={value}")];
    match class {
        Class::Valid if ty == Type::Bool => with("true"),
        // 0: a higher `-v` makes kubectl log its feature gates.
        Class::Valid => with("0"),
        Class::Empty => with(""),
        Class::NotANumber => with("abc"),
        Class::Overflow => with("99999999999999999999"),
        Class::Negative => with("-1"),
        // pflag's rule: a flag that needs a value takes the next word, `-` or not.
        Class::Dash => vec![format!("--{flag}"), "-x".into()],
        Class::Unicode => with("ünï✓"),
        // Inside the run's own directory: a path flag such as `--cache-dir` makes what
        // it names (kubectl's too), and a fixed path outside would be left on the host
        // for every later test to meet (one sets `KUBECONFIG=/nonexistent`).
        Class::MissingFile => with(&dir.join("missing").join("kubeplug").display().to_string()),
        Class::Directory => with(&dir.display().to_string()),
        Class::RefusedUrl => with("http://127.0.0.1:1/x"),
    }
}

/// One plugin beside its kubectl command.
struct Pair {
    plugin: &'static str,
    kubectl: &'static str,
    base: Vec<String>,
    /// Flags not tried, each for a reason given where the pair is made.
    skip: &'static [&'static str],
    /// Only the classes that fail while parsing (rolling-update).
    parse_only: bool,
}

fn run(dir: &Path, args: &[String]) -> Output {
    // A home of its own for each line, and the caches in it (not the cluster's
    // `KUBECACHEDIR`): a discovery cache warmed by the lines before would make what
    // a client dry run checks depend on the order of the lines.
    let home = tempfile::tempdir_in(dir).expect("home");
    cluster()
        .kubectl()
        .args(args)
        .current_dir(dir)
        .env("HOME", home.path())
        .env_remove("KUBECACHEDIR")
        // `--edit=true` opens the editor: one that leaves the file as it is.
        .env("KUBE_EDITOR", "true")
        .stdin("")
        .run()
}

/// klog's header (`E1202 05:40:46.871862    8137 `) without its time and process id.
fn masked(stderr: &str) -> String {
    stderr
        .lines()
        .map(|line| {
            let bytes = line.as_bytes();
            let klog = bytes.len() > 22
                && matches!(bytes[0], b'I' | b'W' | b'E' | b'F')
                && bytes[1..5].iter().all(u8::is_ascii_digit)
                && bytes[5] == b' ';
            match line.find("] ").filter(|_| klog) {
                Some(end) => {
                    let header = &line[..end];
                    let file = header.rsplit(' ').next().unwrap_or_default();
                    format!("{} {file}{}", &line[..1], &line[end..])
                }
                None => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of one pair: `(flag, class, words)`.
fn lines(pair: &Pair, dir: &Path) -> Vec<(String, Class, Vec<String>)> {
    let theirs = run(dir, &[pair.kubectl.to_string(), "--help".into()]).stdout;
    let options = run(dir, &["options".to_string()]).stdout;
    let ours = flags_of(&run(dir, &[pair.plugin.to_string(), "--help".into()]).stdout);
    let mut kubectls = flags_of(&options);
    if !pair.parse_only {
        kubectls.extend(flags_of(&theirs));
    }
    let mut out = Vec::new();
    for (flag, ty) in kubectls {
        if !ours.contains_key(&flag) || pair.skip.contains(&flag.as_str()) {
            continue;
        }
        for &class in classes(ty) {
            let fails_parsing = ty != Type::Text
                && matches!(
                    class,
                    Class::Empty | Class::NotANumber | Class::Overflow | Class::Unicode
                );
            if pair.parse_only && !fails_parsing {
                continue;
            }
            out.push((flag.clone(), class, words(&flag, ty, class, dir)));
        }
    }
    out
}

/// The lines generated (flag and class), how many were identical, and the
/// differences (flag, class, what each said).
type Compared = (
    BTreeSet<(String, Class)>,
    usize,
    Vec<(String, Class, String)>,
);

/// The differences of one pair (`flag`, class, what each said), and the count of
/// lines and identical ones.
fn compare(pair: &Pair, dir: &Path) -> Compared {
    let lines = lines(pair, dir);
    let generated = lines.iter().map(|(f, c, _)| (f.clone(), *c)).collect();
    let results: Vec<_> = std::thread::scope(|s| {
        let chunks: Vec<_> = lines.chunks(lines.len().div_ceil(2).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(flag, class, words)| {
                            let line = |command: &str| {
                                let mut args = vec![command.to_string()];
                                args.extend(pair.base.iter().cloned());
                                args.extend(words.iter().cloned());
                                args
                            };
                            let expected = run(dir, &line(pair.kubectl));
                            let got = run(dir, &line(pair.plugin));
                            (flag.clone(), *class, words.clone(), expected, got)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    let total = results.len();
    let mut differences = Vec::new();
    for (flag, class, words, expected, got) in results {
        let from = format!("'kubectl {} ", pair.kubectl);
        let to = format!("'kubectl {} ", pair.plugin);
        let expected_stderr = masked(&expected.stderr).replace(&from, &to);
        let same = (expected.code, &expected.stdout, &expected_stderr)
            == (got.code, &got.stdout, &masked(&got.stderr));
        if !same {
            differences.push((
                flag,
                class,
                format!(
                    "{} {words:?}:\n  kubectl {} exit {}: {:?} {:?}\n  {} exit {}: {:?} {:?}",
                    pair.plugin,
                    pair.kubectl,
                    expected.code,
                    expected.stdout,
                    expected_stderr,
                    pair.plugin,
                    got.code,
                    got.stdout,
                    masked(&got.stderr)
                ),
            ));
        }
    }
    let identical = total - differences.len();
    (generated, identical, differences)
}

fn check(pair: Pair) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: differential\n",
    )
    .expect("manifest");
    let (generated, identical, differences) = compare(&pair, dir.path());
    let total = generated.len();
    eprintln!(
        "{}: {total} command lines, {identical} identical to kubectl {} ({:.0}%)",
        pair.plugin,
        pair.kubectl,
        100.0 * identical as f64 / total.max(1) as f64
    );
    let listed: BTreeSet<(String, Class)> = DELIBERATE
        .iter()
        .filter(|d| d.0.contains(&pair.plugin))
        .flat_map(|d| {
            d.1.iter()
                .flat_map(|flag| d.2.iter().map(move |class| (flag.to_string(), *class)))
        })
        .filter(|(flag, class)| generated.contains(&(flag.clone(), *class)))
        .collect();
    let seen: BTreeSet<(String, Class)> = differences.iter().map(|d| (d.0.clone(), d.1)).collect();
    let unexplained: Vec<&str> = differences
        .iter()
        .filter(|d| !listed.contains(&(d.0.clone(), d.1)))
        .map(|d| d.2.as_str())
        .collect();
    let stale: Vec<_> = listed.difference(&seen).collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "differences from kubectl:\n{}\nlisted but no longer different: {stale:?}",
        unexplained.join("\n")
    );
}

#[test]
fn create_file_flags_read_as_kubectl_create() {
    check(Pair {
        plugin: "create-file",
        kubectl: "create",
        base: ["-f", "cm.yaml", "--dry-run=client", "-o", "name"]
            .map(String::from)
            .to_vec(),
        // `--help` is not a value.
        skip: &["help"],
        parse_only: false,
    });
}

#[test]
fn run_pod_flags_read_as_kubectl_run() {
    check(Pair {
        plugin: "run-pod",
        kubectl: "run",
        base: [
            "differential",
            "--image=busybox",
            "--dry-run=client",
            "-o",
            "name",
        ]
        .map(String::from)
        .to_vec(),
        skip: &["help"],
        parse_only: false,
    });
}

#[test]
fn rolling_update_global_flags_parse_as_kubectl() {
    check(Pair {
        plugin: "rolling-update",
        kubectl: "get",
        base: vec![],
        skip: &["help"],
        parse_only: true,
    });
}
