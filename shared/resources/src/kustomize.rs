//! `-k DIR`: kubectl's `KustomizeVisitor`, by running `kubectl kustomize DIR` (or a
//! standalone `kustomize build DIR`) rather than embedding kustomize.

use std::ffi::OsStr;
use std::path::Path;

use super::ResourceError;

/// Runs kustomize on `dir` and returns the manifests it prints: `kubectl kustomize`
/// of `kubectl_path` (`KUBECTL_PATH`, the kubectl that ran the plugin) when it names
/// a file, else of the first `kubectl` in `PATH`, else `kustomize build`.
/// `search_path` replaces `PATH` for locating the tool (tests use it).
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
        // the tool on a local directory is all this does, so say so.
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
    let (program, args): (_, &[&str]) = if let Some(kubectl) = exported {
        (kubectl, &["kustomize"])
    } else if let Ok(kubectl) = find("kubectl") {
        (kubectl, &["kustomize"])
    } else if let Ok(kustomize) = find("kustomize") {
        (kustomize, &["build"])
    } else {
        return Err(error(
            "neither \"kubectl\" nor \"kustomize\" was found in PATH".into(),
        ));
    };
    let output = tokio::process::Command::new(&program)
        .args(args)
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| error(format!("{}: {e}", program.display())))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr = stderr.trim();
        let stderr = stderr
            .strip_prefix("error: ")
            .or_else(|| stderr.strip_prefix("Error: "))
            .unwrap_or(stderr);
        return Err(error(format!(
            "{} {} failed: {stderr}",
            program.display(),
            args.join(" ")
        )));
    }
    Ok(output.stdout)
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
            "[ \"$1\" = build ] && echo \"kind: X # from $2\"",
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
    async fn prefers_kubectl_kustomize_and_reports_failures() {
        let bin = tempfile::tempdir().expect("tempdir");
        script(
            bin.path(),
            "kubectl",
            "echo 'error: missing kustomization.yaml' >&2; exit 1",
        );
        let overlay = tempfile::tempdir().expect("tempdir");
        let err = build(overlay.path(), Some(bin.path().as_os_str()), None)
            .await
            .expect_err("fails");
        assert!(
            err.to_string()
                .ends_with("kustomize failed: missing kustomization.yaml"),
            "{err}"
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
