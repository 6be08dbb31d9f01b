//! The commands printed when a run is stopped: how to resume, how to roll back.
//!
//! They must work when pasted into a shell: every word shell-quoted, the
//! namespace pinned (a later run must not act on whatever namespace the kubeconfig
//! then points at), the connection flags kept for the rollback too, and no secret
//! printed (a cancelled CI job's log is read by many).

/// Global flags whose value is a secret: shown as `REDACTED`.
const SECRET_FLAGS: [&str; 2] = ["--token", "--password"];

/// kubectl's global flags that take a value, long and short spellings.
const GLOBAL_VALUE_FLAGS: [&str; 19] = [
    "--kubeconfig",
    "--context",
    "--cluster",
    "--user",
    "--namespace",
    "-n",
    "--server",
    "-s",
    "--token",
    "--as",
    "--as-group",
    "--as-uid",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name",
    "--request-timeout",
    "--cache-dir",
    "--username",
];

/// Global switches (they may carry `=value`).
const GLOBAL_SWITCHES: [&str; 1] = ["--insecure-skip-tls-verify"];

const REDACTED: &str = "REDACTED";

/// A word of the command line, quoted for a POSIX shell: bare when it holds only
/// characters no shell treats specially, else in single quotes (Python's
/// `shlex.quote` rule). Hand-written because the shlex crate also quotes `=`,
/// which would wrap every `--flag=value` of the hint in quotes.
fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\"'\"'"))
}

/// Splits `--flag=value` into `("--flag", Some("value"))`, and `-nfoo` into
/// `("-n", Some("foo"))`.
fn split(word: &str) -> (&str, Option<&str>) {
    if let Some((flag, value)) = word.split_once('=')
        && flag.starts_with('-')
    {
        return (flag, Some(value));
    }
    if word.len() > 2
        && !word.starts_with("--")
        && let Some(short) = ["-n", "-s"].into_iter().find(|s| word.starts_with(s))
    {
        return (short, Some(&word[2..]));
    }
    (word, None)
}

/// `argv` (without the program name) with secret values replaced.
fn redacted(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut iter = argv.iter();
    while let Some(word) = iter.next() {
        let (flag, value) = split(word);
        if SECRET_FLAGS.contains(&flag) {
            out.push(format!("{flag}={REDACTED}"));
            if value.is_none() {
                iter.next();
            }
        } else {
            out.push(word.clone());
        }
    }
    out
}

/// The global flags of `argv`, each as one `--flag=value` word, secrets redacted.
fn global_flags(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = argv.iter();
    while let Some(word) = iter.next() {
        if word == "--" {
            break;
        }
        let (flag, value) = split(word);
        if GLOBAL_VALUE_FLAGS.contains(&flag) {
            let value = match value {
                Some(v) => v.to_string(),
                None => iter.next().cloned().unwrap_or_default(),
            };
            let value = if SECRET_FLAGS.contains(&flag) {
                REDACTED.to_string()
            } else {
                value
            };
            let flag = match flag {
                "-n" => "--namespace",
                "-s" => "--server",
                long => long,
            };
            out.push(format!("{flag}={value}"));
        } else if GLOBAL_SWITCHES.contains(&flag) || flag == "--password" {
            out.push(if flag == "--password" {
                format!("{flag}={REDACTED}")
            } else {
                word.clone()
            });
            if flag == "--password" && value.is_none() {
                iter.next();
            }
        }
    }
    out
}

fn has_namespace(argv: &[String]) -> bool {
    argv.iter()
        .take_while(|w| *w != "--")
        .any(|w| matches!(split(w).0, "-n" | "--namespace"))
}

/// The two commands a stopped run offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hints {
    /// The same command again.
    pub resume: String,
    /// `--rollback` of the same update, with the same connection flags.
    pub rollback: String,
}

impl Hints {
    /// `command` is how the user runs the plugin (`kubectl rolling-update`), `argv`
    /// the arguments it got, `names` the positional RC names, `namespace` the one the
    /// run acts on.
    pub fn new(command: &str, argv: &[String], names: &[String], namespace: &str) -> Self {
        let pin = (!has_namespace(argv)).then(|| format!("--namespace={namespace}"));
        let mut resume: Vec<String> = redacted(argv);
        resume.extend(pin.clone());
        let mut rollback: Vec<String> = names.iter().take(2).cloned().collect();
        rollback.push("--rollback".into());
        rollback.extend(global_flags(argv));
        rollback.extend(pin);
        let join = |words: Vec<String>| {
            let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
            format!("{command} {}", quoted.join(" "))
        };
        Hints {
            resume: join(resume),
            rollback: join(rollback),
        }
    }

    /// The text printed after the interruption message.
    pub fn text(&self, rollback_run: bool) -> String {
        if rollback_run {
            format!(
                "The rollback is left in progress. Run the same command again to finish it:\n  {}",
                self.resume
            )
        } else {
            format!(
                "The update is left in progress. Run the same command again to resume it:\n  {}\nor abort it with:\n  {}",
                self.resume, self.rollback
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_namespace_is_pinned_and_the_token_redacted() {
        let a = argv(&["web", "--image=nginx:2", "--token", "s3cr3t"]);
        let h = Hints::new("kubectl rolling-update", &a, &argv(&["web"]), "ns");
        assert_eq!(
            h.resume,
            "kubectl rolling-update web --image=nginx:2 --token=REDACTED --namespace=ns"
        );
        assert_eq!(
            h.rollback,
            "kubectl rolling-update web --rollback --token=REDACTED --namespace=ns"
        );
        assert!(!h.text(false).contains("s3cr3t"));
    }

    #[test]
    fn connection_flags_are_kept_for_the_rollback() {
        let a = argv(&[
            "-n",
            "prod",
            "web-v1",
            "web-v2",
            "--image",
            "nginx:2",
            "--context=ctx 1",
            "--kubeconfig",
            "/tmp/a b",
            "--insecure-skip-tls-verify",
            "-v=6",
            "--token=abc",
            "--password",
            "pw",
        ]);
        let h = Hints::new(
            "kubectl rolling-update",
            &a,
            &argv(&["web-v1", "web-v2"]),
            "prod",
        );
        assert_eq!(
            h.rollback,
            "kubectl rolling-update web-v1 web-v2 --rollback --namespace=prod '--context=ctx 1' '--kubeconfig=/tmp/a b' --insecure-skip-tls-verify --token=REDACTED --password=REDACTED"
        );
        assert_eq!(
            h.resume,
            "kubectl rolling-update -n prod web-v1 web-v2 --image nginx:2 '--context=ctx 1' --kubeconfig '/tmp/a b' --insecure-skip-tls-verify -v=6 --token=REDACTED --password=REDACTED"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("--a=b:c/d"), "--a=b:c/d");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), "'it'\"'\"'s'");
        assert_eq!(quote("a b"), "'a b'");
    }

    #[test]
    fn attached_short_values_and_odd_words() {
        let a = argv(&["-nprod", "web", "--image=repo/img:$(rm -rf)", "-f", "-"]);
        let h = Hints::new("kubectl rolling-update", &a, &argv(&["web"]), "prod");
        assert_eq!(
            h.resume,
            "kubectl rolling-update -nprod web '--image=repo/img:$(rm -rf)' -f -"
        );
        assert_eq!(
            h.rollback,
            "kubectl rolling-update web --rollback --namespace=prod"
        );
    }
}
