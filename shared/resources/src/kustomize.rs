//! `-k DIR`: kubectl's `KustomizeVisitor`, by running `kubectl kustomize DIR` (or a
//! standalone `kustomize build DIR`) rather than embedding kustomize.
//!
//! What kustomize says is passed through as kubectl's embedded kustomize says it.
//! kustomize writes its deprecation notices (`# Warning: 'commonLabels' is
//! deprecated. …`) straight to stderr and its other notices (`well-defined vars that
//! were never replaced: …`) through Go's `log`, which kubectl turns into klog lines;
//! `kubectl kustomize` is the same kubectl with the same kustomize, so its stderr
//! before the error is what `kubectl create -k` prints there, byte for byte (klog's
//! time and process id aside), and is copied to stderr as it is. Its error is the one
//! `kubectl create -k` returns unchanged from its visitor, which `CheckErr` prints as
//! `error: …`: the message is kept as `kubectl kustomize`'s `CheckErr` printed it,
//! without a word of ours around it.
//!
//! Two settings make the child build as `create -k` does: `--reorder=legacy` (cli-runtime
//! sets `krusty.ReorderOptionLegacy`, so a kustomization with `sortOptions` gets
//! kustomize's `Warning: Sorting order is set both …` klog line; `kubectl kustomize`
//! leaves the option unset unless the deprecated flag is given, whose own notice is
//! dropped), and `KUBERC=off` (kuberc's defaults for `kubectl kustomize` are not
//! `create`'s, and its notices were printed by the kubectl that ran the plugin).

use std::ffi::OsStr;
use std::path::Path;

use super::ResourceError;

/// pflag's notice for the deprecated `--reorder` flag, which `kubectl create -k` never
/// prints (it sets the option without the flag).
const REORDER_NOTICE: &[u8] = b"Flag --reorder has been deprecated";

/// The kustomization file names kustomize looks for, in its order.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether the root kustomization of `dir` sets `sortOptions` (the only case where
/// the reorder option shows: the legacy order is also kustomize's default).
fn sets_sort_options(dir: &Path) -> bool {
    KUSTOMIZATION_FILES.iter().any(|name| {
        std::fs::read(dir.join(name)).is_ok_and(|text| {
            text.split(|&b| b == b'\n')
                .any(|line| line.starts_with(b"sortOptions:"))
        })
    })
}

/// A failed `kubectl kustomize`'s stderr, split into what it printed before its error
/// (kustomize's notices, printed as they are) and the error's message. kubectl 1.37
/// prints the error with `CheckErr` (`error: …`, the newline it added dropped here);
/// kubectl releases whose `main` was component-base's `cli.Run` (1.26–1.32 among them)
/// log it with klog (`E… run.go:72] "command failed" err="…"`, or `err=<` and tab-indented
/// lines when it has several); a standalone kustomize's cobra prints `Error: …`. Each
/// gives the same message, the one `kubectl create -k` prints after `error: `. `None`
/// when no line starts an error (the tool crashed).
fn split_failure(stderr: &[u8]) -> (&[u8], Option<Vec<u8>>) {
    let mut start = 0;
    while start < stderr.len() {
        let line = &stderr[start..];
        for prefix in [&b"error: "[..], b"Error: "] {
            if let Some(message) = line.strip_prefix(prefix) {
                let message = message.strip_suffix(b"\n").unwrap_or(message);
                return (&stderr[..start], Some(message.to_vec()));
            }
        }
        if let Some(message) = klog_command_failed(line) {
            return (&stderr[..start], Some(message));
        }
        match line.iter().position(|&b| b == b'\n') {
            Some(end) => start += end + 1,
            None => break,
        }
    }
    (stderr, None)
}

/// The error of component-base's `klog.ErrorS(err, "command failed")` at the start
/// of `text`, in klog's text format: a quoted Go string, or `<`, the lines of a
/// multi-line value each after a tab, and ` >`.
fn klog_command_failed(text: &[u8]) -> Option<Vec<u8>> {
    const KEY: &[u8] = b"] \"command failed\" err=";
    let first_line = &text[..text.iter().position(|&b| b == b'\n').unwrap_or(text.len())];
    if !first_line.starts_with(b"E") {
        return None;
    }
    let at = first_line.windows(KEY.len()).position(|w| w == KEY)?;
    let value = &text[at + KEY.len()..];
    if value.starts_with(b"\"") {
        let line = &value[..value
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(value.len())];
        return go_unquote(std::str::from_utf8(line).ok()?).map(String::into_bytes);
    }
    let mut rest = value.strip_prefix(b"<\n")?;
    let mut lines: Vec<&[u8]> = Vec::new();
    loop {
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let line = &rest[..end];
        if line == b" >" {
            break;
        }
        lines.push(line.strip_prefix(b"\t")?);
        if end == rest.len() {
            return None;
        }
        rest = &rest[end + 1..];
    }
    Some(lines.join(&b'\n'))
}

/// The string a Go double-quoted literal (`strconv.Quote`'s output) stands for.
fn go_unquote(quoted: &str) -> Option<String> {
    let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut bytes: Vec<u8> = Vec::new();
    let mut chars = inner.chars();
    // `\x` escapes are bytes, which may form UTF-8 together.
    let flush = |bytes: &mut Vec<u8>, out: &mut String| {
        out.push_str(&String::from_utf8_lossy(bytes));
        bytes.clear();
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut bytes, &mut out);
            out.push(c);
            continue;
        }
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Option<u32> {
            let digits: String = chars.by_ref().take(n).collect();
            (digits.len() == n).then_some(())?;
            u32::from_str_radix(&digits, 16).ok()
        };
        match chars.next()? {
            'x' => {
                bytes.push(u8::try_from(hex(&mut chars, 2)?).ok()?);
                continue;
            }
            escaped => {
                flush(&mut bytes, &mut out);
                out.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    '\\' => '\\',
                    '"' => '"',
                    '\'' => '\'',
                    'u' => char::from_u32(hex(&mut chars, 4)?)?,
                    'U' => char::from_u32(hex(&mut chars, 8)?)?,
                    _ => return None,
                });
            }
        }
    }
    flush(&mut bytes, &mut out);
    Some(out)
}

/// `stderr` without pflag's notice for `--reorder` (its first line when given).
fn without_reorder_notice(stderr: &[u8]) -> &[u8] {
    if stderr.starts_with(REORDER_NOTICE) {
        let end = stderr
            .iter()
            .position(|&b| b == b'\n')
            .map_or(stderr.len(), |i| i + 1);
        &stderr[end..]
    } else {
        stderr
    }
}

/// Copies kustomize's notices to stderr now, before anything else is printed, as
/// kubectl prints them while it visits the kustomization.
fn pass_through(notices: &[u8]) {
    use std::io::Write as _;
    if !notices.is_empty() {
        let _ = apiclient::output::Stderr.write_all(notices);
    }
}

/// Runs kustomize on `dir` and returns the manifests it prints: `kubectl kustomize`
/// of `kubectl_path` (`KUBECTL_PATH`, the kubectl that ran the plugin) when it names
/// a file, else of the first `kubectl` in `PATH`, else `kustomize build`.
/// `search_path` replaces `PATH` for locating the tool (tests use it). What the tool
/// prints on stderr besides its error is copied to stderr.
pub(crate) async fn build(
    dir: &Path,
    search_path: Option<&OsStr>,
    kubectl_path: Option<&OsStr>,
) -> Result<Vec<u8>, ResourceError> {
    let error = |reason: String| ResourceError::Kustomize {
        path: dir.display().to_string(),
        reason,
    };
    if !dir.is_dir() {
        // kubectl's embedded kustomize also fetches remote bases (git URLs); running
        // the tool on a local directory is all this does, so say so (and never let
        // the tool take a missing path for a repository to clone).
        let remote = dir
            .to_str()
            .is_some_and(|d| d.contains("://") || d.starts_with("git@"));
        return Err(error(if remote {
            "not a local directory (remote kustomizations are not supported; clone it first)".into()
        } else {
            "not a directory".into()
        }));
    }
    let find = |name: &str| match search_path {
        Some(paths) => which::which_in(
            name,
            Some(paths),
            std::env::current_dir().unwrap_or_default(),
        ),
        None => which::which(name),
    };
    let exported = kubectl_path
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_file());
    let (program, subcommand, kubectl) = if let Some(kubectl) = exported {
        (kubectl, "kustomize", true)
    } else if let Ok(kubectl) = find("kubectl") {
        (kubectl, "kustomize", true)
    } else if let Ok(kustomize) = find("kustomize") {
        (kustomize, "build", false)
    } else {
        return Err(error(
            "neither \"kubectl\" nor \"kustomize\" was found in PATH".into(),
        ));
    };
    let mut command = tokio::process::Command::new(&program);
    command.arg(subcommand);
    if sets_sort_options(dir) {
        command.arg("--reorder=legacy");
    }
    if kubectl {
        command.env("KUBERC", "off");
    }
    let output = command
        // `--`: a directory named like a flag is still the directory.
        .arg("--")
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| error(format!("{}: {e}", program.display())))?;
    let stderr = without_reorder_notice(&output.stderr);
    if output.status.success() {
        pass_through(stderr);
        return Ok(output.stdout);
    }
    match split_failure(stderr) {
        (notices, Some(message)) => {
            pass_through(notices);
            Err(ResourceError::KustomizeFailed {
                message: String::from_utf8_lossy(&message).into_owned(),
            })
        }
        (_, None) => {
            let stderr = String::from_utf8_lossy(stderr);
            Err(error(format!(
                "{} {subcommand} failed ({}): {}",
                program.display(),
                output.status,
                stderr.trim()
            )))
        }
    }
}

// The fakes are shell scripts.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write script");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    #[tokio::test]
    async fn runs_kustomize_build_when_there_is_no_kubectl() {
        let bin = tempfile::tempdir().expect("tempdir");
        script(
            bin.path(),
            "kustomize",
            "[ \"$1\" = build ] && [ \"$2\" = -- ] && echo \"kind: X # from $3\"",
        );
        let overlay = tempfile::tempdir().expect("tempdir");
        let out = build(overlay.path(), Some(bin.path().as_os_str()), None)
            .await
            .expect("kustomize ran");
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!("kind: X # from {}\n", overlay.path().display())
        );
    }

    #[tokio::test]
    async fn prefers_kubectl_kustomize_and_keeps_its_error_unwrapped() {
        let bin = tempfile::tempdir().expect("tempdir");
        script(
            bin.path(),
            "kubectl",
            "echo \"# Warning: 'commonLabels' is deprecated.\" >&2; echo 'error: trouble configuring builtin PatchTransformer with config: `\npath: nope.yaml\n`: open nope.yaml' >&2; exit 1",
        );
        let overlay = tempfile::tempdir().expect("tempdir");
        let err = build(overlay.path(), Some(bin.path().as_os_str()), None)
            .await
            .expect_err("fails");
        assert_eq!(
            err.to_string(),
            "trouble configuring builtin PatchTransformer with config: `\npath: nope.yaml\n`: open nope.yaml"
        );
    }

    /// The notices before the error are kubectl's, printed as they are; the error is
    /// what follows `error: ` (kubectl's `CheckErr`) or `Error: ` (kustomize's cobra).
    #[test]
    fn a_failure_splits_into_notices_and_the_error() {
        let stderr = b"# Warning: 'vars' is deprecated.\nI1206 20:00:00.000000    1 log.go:245] well-defined vars that were never replaced: X\nerror: accumulating resources: boom\nsecond line\n";
        let (notices, message) = split_failure(stderr);
        assert_eq!(
            notices,
            b"# Warning: 'vars' is deprecated.\nI1206 20:00:00.000000    1 log.go:245] well-defined vars that were never replaced: X\n"
        );
        assert_eq!(
            message.as_deref(),
            Some(&b"accumulating resources: boom\nsecond line"[..])
        );
        assert_eq!(
            split_failure(b"Error: x\n"),
            (&b""[..], Some(b"x".to_vec()))
        );
        // A message that ended in a newline keeps it (CheckErr added none).
        assert_eq!(split_failure(b"error: x\n\n").1, Some(b"x\n".to_vec()));
        assert_eq!(
            split_failure(b"panic: boom\n"),
            (&b"panic: boom\n"[..], None)
        );
    }

    /// kubectl 1.32's `kubectl kustomize` (component-base's `cli.Run`) logs its error.
    #[test]
    fn a_logged_error_is_read_back_from_klog() {
        let multi = b"# Warning: 'commonLabels' is deprecated.\nE1206 20:23:46.475361    3720 run.go:72] \"command failed\" err=<\n\ttrouble configuring builtin PatchTransformer with config: `\n\tpath: nope.yaml\n\t`: failed\n >\n";
        let (notices, message) = split_failure(multi);
        assert_eq!(notices, b"# Warning: 'commonLabels' is deprecated.\n");
        assert_eq!(
            String::from_utf8(message.expect("an error")).expect("utf-8"),
            "trouble configuring builtin PatchTransformer with config: `\npath: nope.yaml\n`: failed"
        );
        let single = b"E1206 20:23:46.475361    3720 run.go:72] \"command failed\" err=\"accumulating resources: \\\"x\\\" \\xc3\\xa9 \\u00e9\"\n";
        assert_eq!(
            String::from_utf8(split_failure(single).1.expect("an error")).expect("utf-8"),
            "accumulating resources: \"x\" \u{e9} \u{e9}"
        );
    }

    #[test]
    fn the_reorder_notice_is_dropped_and_only_it() {
        let notice = b"Flag --reorder has been deprecated, use the new 'sortOptions' field in kustomization.yaml instead.\n# Warning: x\n";
        assert_eq!(without_reorder_notice(notice), b"# Warning: x\n");
        assert_eq!(without_reorder_notice(b"# Warning: x\n"), b"# Warning: x\n");
    }

    /// `create -k` builds with the legacy order set, which only shows (as a notice)
    /// when the kustomization has `sortOptions`; the flag is passed only then.
    #[tokio::test]
    async fn sort_options_pass_the_reorder_flag_and_kuberc_is_off() {
        let bin = tempfile::tempdir().expect("tempdir");
        script(bin.path(), "kubectl", "echo \"# $* KUBERC=$KUBERC\"");
        let overlay = tempfile::tempdir().expect("tempdir");
        let dir = overlay.path().display().to_string();
        let out = build(overlay.path(), Some(bin.path().as_os_str()), None)
            .await
            .expect("ran");
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!("# kustomize -- {dir} KUBERC=off\n")
        );
        std::fs::write(
            overlay.path().join("kustomization.yaml"),
            "resources: []\nsortOptions:\n  order: fifo\n",
        )
        .expect("write");
        let out = build(overlay.path(), Some(bin.path().as_os_str()), None)
            .await
            .expect("ran");
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!("# kustomize --reorder=legacy -- {dir} KUBERC=off\n")
        );
    }

    #[tokio::test]
    async fn missing_tools_give_a_clear_error() {
        let empty = tempfile::tempdir().expect("tempdir");
        let overlay = tempfile::tempdir().expect("tempdir");
        let err = build(overlay.path(), Some(empty.path().as_os_str()), None)
            .await
            .expect_err("no tools");
        assert!(
            err.to_string()
                .contains("neither \"kubectl\" nor \"kustomize\" was found in PATH"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn the_kubectl_that_ran_the_plugin_comes_first() {
        let bin = tempfile::tempdir().expect("tempdir");
        script(bin.path(), "kubectl", "echo 'kind: FromPath'");
        let exported = tempfile::tempdir().expect("tempdir");
        script(
            exported.path(),
            "kubectl-1.37",
            "echo \"kind: Exported # $1\"",
        );
        let overlay = tempfile::tempdir().expect("tempdir");
        let kubectl = exported.path().join("kubectl-1.37");
        let out = build(
            overlay.path(),
            Some(bin.path().as_os_str()),
            Some(kubectl.as_os_str()),
        )
        .await
        .expect("kustomize ran");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "kind: Exported # kustomize\n"
        );
        // A KUBECTL_PATH that names nothing: PATH's kubectl.
        let missing = exported.path().join("missing");
        let out = build(
            overlay.path(),
            Some(bin.path().as_os_str()),
            Some(missing.as_os_str()),
        )
        .await
        .expect("kustomize ran");
        assert_eq!(String::from_utf8_lossy(&out), "kind: FromPath\n");
    }
}
