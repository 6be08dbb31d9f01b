//! One kubeconfig file, read as client-go reads it: go-yaml v2 (`goyaml`) into JSON,
//! then into kube's `Kubeconfig`, file references made absolute as kube's `read_from`
//! makes them.

use std::path::Path;

use kube::config::Kubeconfig;

use crate::error::{Error, Result};

/// One kubeconfig file, as kube's `Kubeconfig::read_from` reads it (every document
/// merged, the first to set a value wins; relative file references made absolute
/// against the file's directory) but with the YAML read by `goyaml`, go-yaml v2
/// as client-go reads it, into JSON and then into kube's types. Why not kube's reader:
/// its serde-saphyr decoder, monomorphised over the kubeconfig types, is code every
/// binary would carry for this alone, and go-yaml's reading is kubectl's (`yes` is a
/// boolean, errors in go-yaml's words).
pub fn read(path: &Path) -> Result<Kubeconfig> {
    let fail = |reason: String| Error::Kubeconfig {
        path: path.to_path_buf(),
        reason,
    };
    let text = read_kubeconfig_text(path).map_err(fail)?;
    let dir = path.parent();
    let mut merged: Option<Kubeconfig> = None;
    for document in kubeconfig_documents(&text).map_err(fail)? {
        let mut config = document;
        if let Some(dir) = dir {
            absolute_references(&mut config, dir);
        }
        merged = Some(match merged {
            None => config,
            Some(acc) => acc.merge(config).map_err(|e| fail(e.to_string()))?,
        });
    }
    log_loaded(path);
    // An empty file is an empty kubeconfig.
    Ok(merged.unwrap_or_default())
}

/// client-go's `-v=6` line for a kubeconfig file read (`loader.go`: `Config loaded
/// from file:  PATH`, Go's `Infoln` spacing), once per file: kubectl reads its
/// kubeconfig once, the plugins read it again for each step that needs it.
fn log_loaded(path: &Path) {
    static LOGGED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    if !crate::klog::enabled(6) {
        return;
    }
    let mut logged = LOGGED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if logged.iter().any(|p| p == path) {
        return;
    }
    logged.push(path.to_path_buf());
    crate::klog::info(
        "loader.go",
        line!(),
        &format!("Config loaded from file:  {}", path.display()),
    );
}

/// The documents of a kubeconfig's text, each read as go-yaml v2 reads it and decoded
/// into kube's `Kubeconfig`; empty and `null` documents skipped. The error is the
/// reason only (`yaml: line 6: mapping values are not allowed in this context`), never
/// the text around it (often a token or a key).
fn kubeconfig_documents(text: &str) -> std::result::Result<Vec<Kubeconfig>, String> {
    let mut configs = Vec::new();
    for document in goyaml::documents(text) {
        // apimachinery's YAMLReader's words for `--- text`.
        let document =
            document.map_err(|(_, rest)| format!("invalid Yaml document separator: {rest}"))?;
        // go-yaml's words, its line counted in the document as create -f counts it
        // (in the file for the first document, the only one client-go reads).
        let mut value = document.value.map_err(|e| goyaml::yaml_reason(&e))?;
        set_aside_invalid_interactive_modes(&mut value);
        let config = serde_json::from_value::<Kubeconfig>(value).map_err(|e| e.to_string())?;
        check_base64(&config)?;
        configs.push(config);
    }
    Ok(configs)
}

/// An exec `interactiveMode` string kube's enum cannot hold, moved where kube keeps
/// unknown fields (`credentials::INVALID_INTERACTIVE_MODE`), so that the file loads as
/// kubectl loads it and the user's validation reports it in kubectl's words.
fn set_aside_invalid_interactive_modes(value: &mut serde_json::Value) {
    let users = value
        .get_mut("users")
        .and_then(serde_json::Value::as_array_mut);
    for user in users.into_iter().flatten() {
        let Some(exec) = user
            .pointer_mut("/user/exec")
            .and_then(serde_json::Value::as_object_mut)
        else {
            continue;
        };
        let invalid = exec
            .get("interactiveMode")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|m| !matches!(m, "Never" | "IfAvailable" | "Always"));
        if invalid && let Some(mode) = exec.remove("interactiveMode") {
            // An empty string is Go's "not set".
            if mode.as_str() != Some("") {
                exec.insert(crate::credentials::INVALID_INTERACTIVE_MODE.into(), mode);
            }
        }
    }
}

/// The `*-data` fields of every cluster and user, which client-go decodes as `[]byte`
/// when it loads the file: base64, or the file is refused in Go's words (`illegal
/// base64 data at input byte 0`), whichever context is used (checked beside kubectl
/// 1.32).
fn check_base64(config: &Kubeconfig) -> std::result::Result<(), String> {
    use secrecy::ExposeSecret as _;
    let clusters = config
        .clusters
        .iter()
        .filter_map(|c| c.cluster.as_ref()?.certificate_authority_data.as_deref());
    // In the order Go meets them: its YAML reaches the decoder as JSON with sorted
    // keys (`clusters` before `users`, `client-certificate-data` before
    // `client-key-data`), and the first error is the one reported.
    let users = config
        .auth_infos
        .iter()
        .filter_map(|u| u.auth_info.as_ref())
        .flat_map(|u| {
            let key = u.client_key_data.as_ref().map(|k| k.expose_secret());
            [u.client_certificate_data.as_deref(), key]
        })
        .flatten();
    for data in clusters.chain(users) {
        crate::error::go_base64(&base64::engine::general_purpose::STANDARD, data)?;
    }
    Ok(())
}

/// kube's `read_path`: the file as text, UTF-16 with a byte-order mark decoded, a UTF-8
/// one dropped. Opened and read in two steps, so that a failure names its step as
/// Go's `os.ReadFile` does (`open PATH: permission denied`, `read PATH: is a
/// directory`).
fn read_kubeconfig_text(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read as _;
    let mut file =
        std::fs::File::open(path).map_err(|e| crate::error::go_path_error("open", path, &e))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| crate::error::go_path_error("read", path, &e))?;
    goyaml::text::strict(&bytes)
        .map(std::borrow::Cow::into_owned)
        .map_err(|what| format!("Invalid {what}"))
}

/// kube's (and client-go's `ResolvePaths`) rule: the file references of a kubeconfig
/// are relative to its directory; an exec command only when it holds a separator (a
/// bare name is looked up on `PATH`).
fn absolute_references(config: &mut Kubeconfig, dir: &Path) {
    let absolute = |file: &mut String| {
        if Path::new(file.as_str()).is_relative()
            && let Some(abs) = dir.join(file.as_str()).to_str()
        {
            *file = abs.to_owned();
        }
    };
    for cluster in config
        .clusters
        .iter_mut()
        .filter_map(|n| n.cluster.as_mut())
    {
        if let Some(ca) = &mut cluster.certificate_authority {
            absolute(ca);
        }
    }
    for auth in config
        .auth_infos
        .iter_mut()
        .filter_map(|n| n.auth_info.as_mut())
    {
        for file in [
            &mut auth.client_certificate,
            &mut auth.client_key,
            &mut auth.token_file,
        ]
        .into_iter()
        .flatten()
        {
            absolute(file);
        }
        if let Some(command) = auth.exec.as_mut().and_then(|e| e.command.as_mut())
            && command.contains(std::path::MAIN_SEPARATOR)
        {
            absolute(command);
        }
    }
}
