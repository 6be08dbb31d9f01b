//! kubectl's preferences file, kuberc (`kubectl.config.k8s.io` `Preference`), read as
//! kubectl 1.37 reads it before it runs any command, a plugin included: from
//! `--kuberc PATH`, else `KUBERC`, else `~/.kube/kuberc`; `KUBERC=off` or
//! `KUBECTL_KUBERC=false` turn it off.
//!
//! What a plugin takes from it is the credential plugin policy
//! ([`crate::credentials::policy`]). `defaults` and `aliases` are checked as kubectl
//! checks them (an invalid one fails the command), but kubectl applies neither to a
//! plugin: its aliases may only name built-in commands, and its defaults are looked up
//! by built-in command name, which a plugin is not.
//!
//! Failures are kubectl's: a missing or unreadable file named by `--kuberc` or `KUBERC`
//! stops the command; the default file may be missing, and any other problem with it is
//! a warning. kubectl prints its two warnings without a final newline, and so do we.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::credentials::policy::{self, PluginPolicy};

/// What kuberc holds for a plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preferences {
    pub policy: PluginPolicy,
}

/// The process environment kuberc depends on, passed in so tests need not change it.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `KUBECTL_KUBERC` (`false` turns kuberc off: kubectl then has no `--kuberc`).
    pub kubectl_kuberc: Option<String>,
    /// `KUBERC`: a path, or `off`.
    pub kuberc: Option<String>,
    /// The home directory (`~/.kube/kuberc`).
    pub home: Option<PathBuf>,
}

impl Env {
    /// This process's environment.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        Self {
            kubectl_kuberc: var("KUBECTL_KUBERC"),
            kuberc: var("KUBERC"),
            home: crate::home::dir(),
        }
    }

    /// `KUBECTL_KUBERC=false` (any case), kubectl's switch for the whole feature.
    pub fn disabled(&self) -> bool {
        self.kubectl_kuberc
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case("false"))
    }
}

/// kubectl's `getExplicitKuberc`: the value of `--kuberc` in the raw arguments (before
/// any `--`), read before the flags are parsed. `--kuberc` without a value, or with an
/// empty one, is kubectl's `kuberc file is not found`.
pub fn explicit_path(args: &[OsString]) -> Result<Option<String>, String> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for (i, arg) in args.iter().enumerate() {
        if arg == "--" {
            break;
        }
        if arg == "--kuberc" {
            return match args.get(i + 1) {
                Some(path) if !path.is_empty() => Ok(Some(path.clone())),
                Some(_) => Ok(None),
                None => Err("kuberc file is not found".into()),
            };
        }
        // kubectl's test is `Contains`, and it keeps the text up to a second `=`.
        if arg.contains("--kuberc=") {
            return match arg.split('=').nth(1) {
                Some(path) if !path.is_empty() => Ok(Some(path.to_string())),
                _ => Err("kuberc file is not found".into()),
            };
        }
    }
    Ok(None)
}

/// kubectl's `Preferences.Apply` up to the point where it concerns a plugin: the file
/// found, read and validated. `Ok(None)` when there is none (or kuberc is off);
/// warnings go to `warn`. The error is the whole text kubectl prints after
/// `error occurred while applying preferences `.
pub fn load(
    explicit: Option<&str>,
    env: &Env,
    warn: &mut dyn std::io::Write,
) -> Result<Option<Preferences>, String> {
    if env.disabled() {
        return Ok(None);
    }
    let Some((path, explicitly)) =
        locate(explicit, env).map_err(|e| format!("kuberc error {e}"))?
    else {
        return Ok(None);
    };
    let decoded = match decode_file(&path) {
        Ok(Some((prefs, Some(strict)))) => {
            let _ = write!(
                warn,
                "kuberc: ignoring strict decoding error in {}: {strict}",
                path.display()
            );
            Some(prefs)
        }
        Ok(found) => found.map(|(prefs, _)| prefs),
        Err(e) if explicitly => return Err(format!("kuberc error kuberc: {e}")),
        Err(Failure::Missing(_)) => None,
        Err(e) => {
            let _ = write!(
                warn,
                "kuberc: no preferences loaded from {}: {e}",
                path.display()
            );
            None
        }
    };
    let Some(decoded) = decoded else {
        return Ok(None);
    };
    decoded.validate()?;
    Ok(Some(Preferences {
        policy: decoded.policy,
    }))
}

/// kubectl's `LoadKuberc`: the file and whether the user named it.
fn locate(explicit: Option<&str>, env: &Env) -> Result<Option<(PathBuf, bool)>, String> {
    let from_env = env.kuberc.as_deref().filter(|v| !v.is_empty());
    if from_env == Some("off") {
        if explicit.is_some() {
            return Err(
                "disabling kuberc via KUBERC=off and passing kuberc flag are mutually exclusive"
                    .into(),
            );
        }
        return Ok(None);
    }
    if let Some(path) = explicit {
        return Ok(Some((PathBuf::from(path), true)));
    }
    if let Some(path) = from_env {
        return Ok(Some((PathBuf::from(path), true)));
    }
    // kubectl's `RecommendedKubeRCFile`, from the home directory it found at start.
    let home = env.home.clone().unwrap_or_default();
    Ok(Some((home.join(".kube").join("kuberc"), false)))
}

/// Why a kuberc file gave no preferences.
#[derive(Debug)]
enum Failure {
    /// The file does not exist (fine for the default file).
    Missing(String),
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Missing(e) | Failure::Other(e) => f.write_str(e),
        }
    }
}

/// A `Preference` as read, before validation.
#[derive(Debug, Default)]
struct Decoded {
    policy: PluginPolicy,
    aliases: Vec<(String, Vec<String>)>,
    defaults: Vec<Vec<String>>,
}

impl Decoded {
    /// kubectl's `Preferences.validate`, in its order and words.
    fn validate(&self) -> Result<(), String> {
        let check_flags = |names: &[String]| {
            names
                .iter()
                .try_for_each(|name| match name.starts_with('-') {
                    true => Err(format!(
                        "flag name {name} should be in long form without dashes"
                    )),
                    false => Ok(()),
                })
        };
        let mut seen = std::collections::HashSet::new();
        for (name, options) in &self.aliases {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphabetic()) {
                return Err("invalid alias name, can only include alphabetical characters".into());
            }
            check_flags(options)?;
            if !seen.insert(name) {
                return Err(format!("duplicate alias name {name}"));
            }
        }
        for options in &self.defaults {
            check_flags(options)?;
        }
        policy::validate(&self.policy)
    }
}

/// kubectl's `decodePreference`: the first document of the file that decodes as a
/// `Preference`, with its strict decoding error (unknown fields) if it had one.
/// Documents of other kinds and versions are skipped; a file with documents but no
/// usable one is an error; an empty file has no preferences.
fn decode_file(path: &Path) -> Result<Option<(Decoded, Option<String>)>, Failure> {
    let bytes = std::fs::read(path).map_err(|e| {
        let text = crate::error::go_path_error(
            if e.kind() == std::io::ErrorKind::IsADirectory {
                "read"
            } else {
                "open"
            },
            path,
            &e,
        );
        match e.kind() {
            std::io::ErrorKind::NotFound => Failure::Missing(text),
            _ => Failure::Other(text),
        }
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut attempted = 0;
    for document in goyaml::documents(&text) {
        attempted += 1;
        let Ok(document) = document else { continue };
        let Ok(value) = document.value else { continue };
        if let Some(found) = decode_document(&value) {
            return Ok(Some(found));
        }
    }
    if attempted > 0 {
        return Err(Failure::Other(format!(
            "no valid preferences found in {}, use --v=5 to see details",
            path.display()
        )));
    }
    Ok(None)
}

/// One document as kubectl's scheme decodes it: `kubectl.config.k8s.io/v1beta1` or
/// `v1alpha1`, kind `Preference`, every field of the right type. `None` when it is
/// not one.
fn decode_document(value: &Value) -> Option<(Decoded, Option<String>)> {
    if value.get("kind")?.as_str()? != "Preference" {
        return None;
    }
    let version = value.get("apiVersion")?.as_str()?;
    let (decoded, known) = match version {
        "kubectl.config.k8s.io/v1beta1" => (v1beta1(value)?, V1BETA1_FIELDS),
        "kubectl.config.k8s.io/v1alpha1" => (v1alpha1(value)?, V1ALPHA1_FIELDS),
        _ => return None,
    };
    let mut unknown = Vec::new();
    unknown_fields(value, known, "", &mut unknown);
    let strict = (!unknown.is_empty()).then(|| {
        let fields: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field {f:?}"))
            .collect();
        format!("strict decoding error: {}", fields.join(", "))
    });
    Some((decoded, strict))
}

/// An option default: `name` and `default`.
#[derive(Deserialize)]
struct OptionDefault {
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "default")]
    _default: Option<String>,
}

#[derive(Deserialize)]
struct BetaAlias {
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "command")]
    _command: Option<String>,
    #[serde(default, rename = "prependArgs")]
    _prepend: Option<Vec<String>>,
    #[serde(default, rename = "appendArgs")]
    _append: Option<Vec<String>>,
    #[serde(default)]
    options: Option<Vec<OptionDefault>>,
}

#[derive(Deserialize)]
struct BetaDefaults {
    #[serde(default, rename = "command")]
    _command: Option<String>,
    #[serde(default)]
    options: Option<Vec<OptionDefault>>,
}

#[derive(Deserialize)]
struct AllowlistEntry {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    command: Option<String>,
}

#[derive(Deserialize)]
struct V1beta1 {
    #[serde(default)]
    defaults: Option<Vec<BetaDefaults>>,
    #[serde(default)]
    aliases: Option<Vec<BetaAlias>>,
    #[serde(default, rename = "credentialPluginPolicy")]
    policy: Option<String>,
    #[serde(default, rename = "credentialPluginAllowlist")]
    allowlist: Option<Vec<AllowlistEntry>>,
}

/// The fields kubectl's types know, for the strict check: `(path, names)`, the path
/// with `[]` for list items.
type Fields = &'static [(&'static str, &'static [&'static str])];

const V1BETA1_FIELDS: Fields = &[
    (
        "",
        &[
            "apiVersion",
            "kind",
            "defaults",
            "aliases",
            "credentialPluginPolicy",
            "credentialPluginAllowlist",
        ],
    ),
    ("defaults[]", &["command", "options"]),
    ("defaults[].options[]", &["name", "default"]),
    (
        "aliases[]",
        &["name", "command", "prependArgs", "appendArgs", "options"],
    ),
    ("aliases[].options[]", &["name", "default"]),
    ("credentialPluginAllowlist[]", &["name", "command"]),
];

const V1ALPHA1_FIELDS: Fields = &[
    ("", &["apiVersion", "kind", "overrides", "aliases"]),
    ("overrides[]", &["command", "flags"]),
    ("overrides[].flags[]", &["name", "default"]),
    (
        "aliases[]",
        &["name", "command", "prependArgs", "appendArgs", "flags"],
    ),
    ("aliases[].flags[]", &["name", "default"]),
];

/// The unknown fields of `value`, as apimachinery's strict decoder names them
/// (`aliases[0].foo`).
fn unknown_fields(value: &Value, known: Fields, at: &str, out: &mut Vec<String>) {
    let Some(map) = value.as_object() else { return };
    let shape: String = strip_indices(at);
    let Some((_, names)) = known.iter().find(|(path, _)| *path == shape) else {
        return;
    };
    for (key, child) in map {
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        if !names.contains(&key.as_str()) {
            out.push(path);
            continue;
        }
        if let Some(items) = child.as_array() {
            for (i, item) in items.iter().enumerate() {
                unknown_fields(item, known, &format!("{path}[{i}]"), out);
            }
        }
    }
}

/// `aliases[0].options[1]` → `aliases[].options[]`.
fn strip_indices(path: &str) -> String {
    let mut out = String::new();
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

fn option_names(options: Option<Vec<OptionDefault>>) -> Vec<String> {
    options
        .into_iter()
        .flatten()
        .map(|o| o.name.unwrap_or_default())
        .collect()
}

fn v1beta1(value: &Value) -> Option<Decoded> {
    let prefs: V1beta1 = serde_json::from_value(value.clone()).ok()?;
    let allowlist = match prefs.allowlist {
        None => None,
        Some(entries) => {
            let mut commands = Vec::new();
            for entry in entries {
                // kubectl's conversion: `name` (deprecated) becomes `command`; both,
                // different, is a decoding error (the document is skipped).
                let name = entry.name.unwrap_or_default();
                let command = entry.command.unwrap_or_default();
                if !name.is_empty() && !command.is_empty() && name != command {
                    return None;
                }
                commands.push(if command.is_empty() { name } else { command });
            }
            Some(commands)
        }
    };
    Some(Decoded {
        policy: PluginPolicy {
            policy_type: prefs.policy.unwrap_or_default(),
            allowlist,
        },
        aliases: prefs
            .aliases
            .into_iter()
            .flatten()
            .map(|a| (a.name.unwrap_or_default(), option_names(a.options)))
            .collect(),
        defaults: prefs
            .defaults
            .into_iter()
            .flatten()
            .map(|d| option_names(d.options))
            .collect(),
    })
}

#[derive(Deserialize)]
struct AlphaAlias {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    flags: Option<Vec<OptionDefault>>,
}

#[derive(Deserialize)]
struct AlphaOverride {
    #[serde(default)]
    flags: Option<Vec<OptionDefault>>,
}

#[derive(Deserialize)]
struct V1alpha1 {
    #[serde(default)]
    overrides: Option<Vec<AlphaOverride>>,
    #[serde(default)]
    aliases: Option<Vec<AlphaAlias>>,
}

/// v1alpha1 has no credential plugin policy: it is `AllowAll`.
fn v1alpha1(value: &Value) -> Option<Decoded> {
    let prefs: V1alpha1 = serde_json::from_value(value.clone()).ok()?;
    Some(Decoded {
        policy: PluginPolicy::default(),
        aliases: prefs
            .aliases
            .into_iter()
            .flatten()
            .map(|a| (a.name.unwrap_or_default(), option_names(a.flags)))
            .collect(),
        defaults: prefs
            .overrides
            .into_iter()
            .flatten()
            .map(|o| option_names(o.flags))
            .collect(),
    })
}

#[cfg(test)]
mod tests;
