//! client-go's credential plugin policy (`rest.Config.ExecProvider.PluginPolicy`, set
//! by kubectl from kuberc's `credentialPluginPolicy` and `credentialPluginAllowlist`):
//! which exec credential plugins may run at all. Checked before the plugin is started,
//! in client-go's words (`plugin "/bin/sh" not allowed: policy set to "DenyAll"`).
//!
//! The policy rides on the exec configuration itself, as kubectl puts it on the
//! `ExecProvider` of its REST config: every run of the plugin (the first, and the ones
//! after its credential expires) reads it from there, so no path to the plugin can
//! miss it.

use std::path::Path;

use kube::config::ExecConfig;
use serde::{Deserialize, Serialize};

/// Where the policy is kept in the exec configuration (kube's `other`, which holds
/// unknown kubeconfig fields; the kubeconfig cannot set this one: the loader replaces
/// it).
const POLICY_KEY: &str = "kubeplug.credentialPluginPolicy";

/// A credential plugin policy: `policy_type` is kuberc's `credentialPluginPolicy` as
/// written (`""` is `AllowAll`; anything unknown is refused by [`validate`]), and
/// `allowlist` its `credentialPluginAllowlist` commands (`None` when the field is
/// absent or null, which client-go tells apart from an empty list).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginPolicy {
    pub policy_type: String,
    pub allowlist: Option<Vec<String>>,
}

/// client-go's `ValidatePluginPolicy`, in its words.
pub fn validate(policy: &PluginPolicy) -> Result<(), String> {
    match policy.policy_type.as_str() {
        "" | "AllowAll" | "DenyAll" => match policy.allowlist {
            Some(_) => Err(format!(
                "misconfigured credential plugin allowlist: plugin policy is {:?} but allowlist is non-nil",
                policy.policy_type
            )),
            None => Ok(()),
        },
        "Allowlist" => validate_allowlist(policy.allowlist.as_deref()),
        other => Err(format!("unknown plugin policy: {other:?}")),
    }
}

fn validate_allowlist(list: Option<&[String]>) -> Result<(), String> {
    // A misspelt field name leaves the list unset: this is a security knob, so it
    // fails rather than allowing everything or nothing silently.
    let Some(list) = list else {
        return Err(
            "credential plugin policy set to \"Allowlist\", but allowlist is unspecified".into(),
        );
    };
    if list.is_empty() {
        return Err("credential plugin policy set to \"Allowlist\", but allowlist is empty; use \"DenyAll\" policy instead".into());
    }
    for (i, command) in list.iter().enumerate() {
        if command.is_empty() {
            return Err(format!(
                "misconfigured credential plugin allowlist: empty allowlist entry #{}",
                i + 1
            ));
        }
        let cleaned = clean(command);
        if cleaned != *command {
            return Err(format!(
                "non-normalized file path: {command:?} vs {cleaned:?}"
            ));
        }
    }
    Ok(())
}

/// Puts `policy` on `exec`, replacing whatever was there.
pub fn attach(exec: &mut ExecConfig, policy: &PluginPolicy) {
    exec.other.remove(POLICY_KEY);
    if let Ok(value) = serde_json::to_value(policy) {
        exec.other.insert(POLICY_KEY.into(), value);
    }
}

/// The policy on `exec`: `AllowAll` when none was attached.
fn of(exec: &ExecConfig) -> PluginPolicy {
    exec.other
        .get(POLICY_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// client-go's `updateCommandAndCheckAllowlistLocked`: whether the plugin `program`
/// (already `filepath.Clean`ed) may run under `exec`'s policy. The reason is the text
/// after `getting credentials: `.
pub(super) fn check(exec: &ExecConfig, program: &str) -> Result<(), String> {
    let policy = of(exec);
    validate(&policy).map_err(|e| format!("invalid plugin policy: {e}"))?;
    match policy.policy_type.as_str() {
        "" | "AllowAll" => Ok(()),
        "DenyAll" => Err(format!(
            "plugin {program:?} not allowed: policy set to \"DenyAll\""
        )),
        _ => check_allowlist(program, policy.allowlist.as_deref().unwrap_or_default()),
    }
}

/// client-go's `checkAllowlistLocked`: an entry equal to the command as configured,
/// or to the executable `PATH` finds for it; else the entries with the same base name,
/// each looked up on `PATH`, equal to the executable.
fn check_allowlist(program: &str, allowlist: &[String]) -> Result<(), String> {
    let listed = |path: &str| allowlist.iter().any(|entry| entry == path);
    if listed(program) {
        return Ok(());
    }
    let resolved = look_path(program).map_err(|e| {
        format!(
            "plugin path {program:?} cannot be resolved for credential plugin allowlist check: {e}"
        )
    })?;
    if listed(&resolved) {
        return Ok(());
    }
    let base = |p: &str| base(p).to_string();
    let hint = base(&resolved);
    let allowed = allowlist
        .iter()
        .filter(|entry| base(entry) == hint)
        .filter_map(|entry| look_path(entry).ok())
        .any(|entry| entry == resolved);
    if allowed {
        return Ok(());
    }
    Err(format!(
        "plugin path {resolved:?} is not permitted by the credential plugin allowlist"
    ))
}

/// Go's `exec.LookPath`: a name with a slash is checked as it is; a bare name is
/// searched in `PATH` (an empty entry is the current directory). The error is Go's
/// (`exec: "x": executable file not found in $PATH`).
fn look_path(file: &str) -> Result<String, String> {
    if file.contains('/') {
        return executable(Path::new(file))
            .map(|()| file.to_string())
            .map_err(|e| format!("exec: {file:?}: {e}"));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".").to_path_buf()
        } else {
            dir
        };
        let candidate = dir.join(file);
        if executable(&candidate).is_ok() {
            return Ok(clean(&format!("{}/{file}", dir.to_string_lossy())));
        }
    }
    Err(format!(
        "exec: {file:?}: executable file not found in $PATH"
    ))
}

/// Go's `filepath.Clean`, lexically: repeated slashes and `.` elements dropped, `..`
/// applied to the element before it, no trailing slash; empty is `.`. Hand-written:
/// `std::path` normalises only some of this and never applies `..`.
pub(crate) fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Base`: the last element, trailing slashes ignored.
fn base(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "." } else { "/" };
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Go's `findExecutable`: a regular file (or anything not a directory) with an
/// execute bit.
fn executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta =
        std::fs::metadata(path).map_err(|e| crate::error::go_path_error("stat", path, &e))?;
    if !meta.is_dir() && meta.permissions().mode() & 0o111 != 0 {
        Ok(())
    } else {
        Err("permission denied".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(policy_type: &str, allowlist: Option<&[&str]>) -> PluginPolicy {
        PluginPolicy {
            policy_type: policy_type.into(),
            allowlist: allowlist.map(|l| l.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn paths_are_cleaned_as_go_cleans_them() {
        for (path, want) in [
            ("", "."),
            ("/bin//sh", "/bin/sh"),
            ("./sh", "sh"),
            ("/a/../../b/", "/b"),
            ("../a/./b/..", "../a"),
            ("/", "/"),
        ] {
            assert_eq!(clean(path), want, "{path}");
        }
        assert_eq!(base("/usr/bin/sh"), "sh");
        assert_eq!(base("sh/"), "sh");
        assert_eq!(base("///"), "/");
    }

    #[test]
    fn validation_is_client_go_s() {
        assert_eq!(validate(&policy("", None)), Ok(()));
        assert_eq!(validate(&policy("DenyAll", None)), Ok(()));
        assert_eq!(
            validate(&policy("DenyAll", Some(&[]))),
            Err("misconfigured credential plugin allowlist: plugin policy is \"DenyAll\" but allowlist is non-nil".into())
        );
        assert_eq!(
            validate(&policy("Allowlist", None)),
            Err(
                "credential plugin policy set to \"Allowlist\", but allowlist is unspecified"
                    .into()
            )
        );
        assert_eq!(
            validate(&policy("Allowlist", Some(&[]))),
            Err("credential plugin policy set to \"Allowlist\", but allowlist is empty; use \"DenyAll\" policy instead".into())
        );
        assert_eq!(
            validate(&policy("Allowlist", Some(&["/bin/sh", ""]))),
            Err("misconfigured credential plugin allowlist: empty allowlist entry #2".into())
        );
        assert_eq!(
            validate(&policy("Allowlist", Some(&["/bin//sh"]))),
            Err("non-normalized file path: \"/bin//sh\" vs \"/bin/sh\"".into())
        );
        assert_eq!(
            validate(&policy("Sometimes", None)),
            Err("unknown plugin policy: \"Sometimes\"".into())
        );
    }

    fn exec_with(p: &PluginPolicy) -> ExecConfig {
        let mut exec: ExecConfig = serde_json::from_value(serde_json::json!({
            "command": "/bin/sh", "apiVersion": "client.authentication.k8s.io/v1"
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        attach(&mut exec, p);
        exec
    }

    #[test]
    fn the_policy_decides_before_the_plugin_runs() {
        let none: ExecConfig = exec_with(&PluginPolicy::default());
        assert_eq!(check(&none, "/bin/sh"), Ok(()));
        assert_eq!(
            check(&exec_with(&policy("DenyAll", None)), "/bin/sh"),
            Err("plugin \"/bin/sh\" not allowed: policy set to \"DenyAll\"".into())
        );
        let listed = exec_with(&policy("Allowlist", Some(&["/bin/sh"])));
        assert_eq!(check(&listed, "/bin/sh"), Ok(()));
        assert_eq!(
            check(&listed, "/bin/true"),
            Err(
                "plugin path \"/bin/true\" is not permitted by the credential plugin allowlist"
                    .into()
            )
        );
        assert_eq!(
            check(&listed, "/nonexistent/plugin"),
            Err("plugin path \"/nonexistent/plugin\" cannot be resolved for credential plugin allowlist check: exec: \"/nonexistent/plugin\": stat /nonexistent/plugin: no such file or directory".into())
        );
        assert_eq!(
            check(&listed, "kubeplug-no-such-plugin"),
            Err("plugin path \"kubeplug-no-such-plugin\" cannot be resolved for credential plugin allowlist check: exec: \"kubeplug-no-such-plugin\": executable file not found in $PATH".into())
        );
    }
}
