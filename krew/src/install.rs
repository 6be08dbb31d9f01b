//! krew's install steps for one platform of a manifest, on local archive bytes (what
//! `kubectl krew install --manifest … --archive …` does): checksum, extraction into a
//! staging directory, the `files` moves, the store directory, the `bin` check, the
//! license check of `validate-krew-manifest`, and the link in the bin directory.
//!
//! Layout (`KREW_ROOT`): `store/<name>/<version>/…`, `bin/kubectl-<name, - as _>` →
//! the binary, `receipts/<name>.yaml`.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};

use sha2::{Digest, Sha256};

#[cfg(unix)]
use crate::Plugin;
use crate::archive::{self, EntryKind};
use crate::{FileOperation, Platform};

/// File names `validate-krew-manifest` accepts as the extracted license (any case).
const LICENSE_NAMES: [&str; 8] = [
    "license",
    "license.txt",
    "license.md",
    "licenses",
    "licenses.txt",
    "licenses.md",
    "copying",
    "copying.txt",
];

/// Checks the archive's sha256 against the manifest's (krew compares the decoded
/// bytes, so the case of the hex does not matter here).
pub fn verify_sha256(platform: &Platform, bytes: &[u8]) -> anyhow::Result<()> {
    let got: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if !got.eq_ignore_ascii_case(&platform.sha256) {
        bail!(
            "checksum does not match, want: {}, got {got}",
            platform.sha256
        );
    }
    Ok(())
}

/// Extracts `bytes` into `dir` with the archive's modes (krew never runs chmod).
pub fn extract(bytes: &[u8], dir: &Path) -> anyhow::Result<()> {
    for entry in archive::read(bytes).context("failed to extract file")? {
        let path = dir.join(&entry.name);
        match entry.kind {
            EntryKind::Dir => std::fs::create_dir_all(&path)?,
            EntryKind::File => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&path, &entry.contents)
                    .with_context(|| format!("failed to create file {:?}", path.display()))?;
                set_mode(&path, entry.mode)?;
            }
            EntryKind::Other(t) => bail!(
                // Go prints the type byte in decimal: a symlink ('2') is "type 50".
                "failed to extract file: unable to handle file type {} for {:?} in tar",
                t,
                entry.name
            ),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o7777))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

/// Whether the file has an execute bit (always true where there are no modes).
pub fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Go's `filepath.Clean` for the relative, slash-separated paths of `files[].to`.
fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".into()
    } else {
        joined
    }
}

/// Whether `path` stays inside `base` (no `..` escaping, not absolute).
fn is_sub_path(path: &str) -> bool {
    let mut depth = 0i32;
    for c in Path::new(path).components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::ParentDir => depth -= 1,
            Component::CurDir => {}
            _ => return false,
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// krew's `moveFiles` for one operation: a direct move when `from` names an existing
/// path (keeping its base name when `to` is `.`), otherwise a glob whose matches
/// keep their base names inside `to`.
fn move_files(from_dir: &Path, to_dir: &Path, op: &FileOperation) -> anyhow::Result<()> {
    let cleaned = clean(&op.to);
    if op.to != cleaned {
        bail!(
            "could not find move targets: the provided path is not clean, {:?} should be {cleaned:?}",
            op.to
        );
    }
    let from_clean = clean(&op.from);
    if !is_sub_path(&from_clean) || !is_sub_path(&cleaned) {
        bail!(
            "could not find move targets: can't move, move target {:?} → {:?} is out of bounds",
            op.from,
            op.to
        );
    }
    let direct = from_dir.join(&from_clean);
    let moves: Vec<(PathBuf, PathBuf)> = if direct.exists() {
        let to = if cleaned == "." {
            to_dir.join(direct.file_name().unwrap_or_default())
        } else {
            to_dir.join(&cleaned)
        };
        vec![(direct, to)]
    } else {
        let pattern = from_dir.join(&op.from);
        let matches: Vec<PathBuf> = glob::glob(&pattern.to_string_lossy())
            .context("could not get files using a glob string")?
            .filter_map(Result::ok)
            .collect();
        if matches.is_empty() {
            bail!(
                "could not find move targets: no files in the plugin archive matched the glob pattern={}",
                op.from
            );
        }
        matches
            .into_iter()
            .map(|m| {
                let to = to_dir
                    .join(&cleaned)
                    .join(m.file_name().unwrap_or_default());
                (m, to)
            })
            .collect()
    };
    for (from, to) in moves {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if to.is_dir() {
            std::fs::remove_dir_all(&to)?;
        }
        std::fs::rename(&from, &to).with_context(|| {
            format!(
                "could not rename/copy file from {:?} to {:?}",
                from.display(),
                to.display()
            )
        })?;
    }
    Ok(())
}

/// Installs `platform` of `plugin` from `bytes` into `install_dir` (which must not
/// exist), returning the path of the binary.
pub fn install_files(
    platform: &Platform,
    bytes: &[u8],
    install_dir: &Path,
) -> anyhow::Result<PathBuf> {
    verify_sha256(platform, bytes)?;
    let parent = install_dir
        .parent()
        .context("install directory has no parent")?;
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::Builder::new()
        .prefix(".krew-staging-")
        .tempdir_in(parent)?;
    let unpacked = staging.path().join("unpacked");
    let moved = staging.path().join("moved");
    std::fs::create_dir_all(&unpacked)?;
    std::fs::create_dir_all(&moved)?;
    extract(bytes, &unpacked)?;
    let default = vec![FileOperation {
        from: "*".into(),
        to: ".".into(),
    }];
    for op in platform.files.as_ref().unwrap_or(&default) {
        move_files(&unpacked, &moved, op).context("failed to move files")?;
    }
    if install_dir.exists() {
        std::fs::remove_dir_all(install_dir)?;
    }
    std::fs::rename(&moved, install_dir)?;
    let bin_rel = clean(&platform.bin);
    if !is_sub_path(&bin_rel) {
        bail!(
            "the bin path {:?} is outside the install directory",
            platform.bin
        );
    }
    let bin = install_dir.join(bin_rel);
    if !bin.is_file() {
        bail!(
            "bin {:?} not found in the installation directory after the file moves",
            platform.bin
        );
    }
    Ok(bin)
}

/// The license file `validate-krew-manifest` would find in `dir`, if any.
pub fn find_license(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_license(&path) {
                return Some(found);
            }
        } else if let Some(name) = path.file_name().and_then(|n| n.to_str())
            && LICENSE_NAMES.contains(&name.to_ascii_lowercase().as_str())
        {
            return Some(path);
        }
    }
    None
}

/// What a krew install produced.
#[cfg(unix)]
#[derive(Debug)]
pub struct Installed {
    pub bin: PathBuf,
    pub link: PathBuf,
}

/// A full install into a krew root: store directory, link, receipt. Replaces an
/// earlier version of the same plugin, as `krew upgrade` does.
#[cfg(unix)]
pub fn install(
    root: &Path,
    plugin: &Plugin,
    manifest_text: &str,
    platform: &Platform,
    bytes: &[u8],
) -> anyhow::Result<Installed> {
    let name = &plugin.metadata.name;
    let plugin_store = root.join("store").join(name);
    let store_dir = plugin_store.join(&plugin.spec.version);
    let bin = install_files(platform, bytes, &store_dir)?;
    let link = root.join("bin").join(link_name(name));
    std::fs::create_dir_all(root.join("bin"))?;
    match std::fs::symlink_metadata(&link) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(&link)?,
        Ok(_) => bail!(
            "can't create symbolic link, {} exists and is not a symbolic link",
            link.display()
        ),
        Err(_) => {}
    }
    std::os::unix::fs::symlink(&bin, &link)
        .with_context(|| format!("cannot create link {}", link.display()))?;
    // Older versions go, as after `krew upgrade`.
    for entry in std::fs::read_dir(&plugin_store)?.flatten() {
        if entry.path() != store_dir {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let receipts = root.join("receipts");
    std::fs::create_dir_all(&receipts)?;
    std::fs::write(
        receipts.join(format!("{name}.yaml")),
        format!(
            "{}status:\n  source:\n    name: detached\n",
            manifest_text.trim_end().to_string() + "\n"
        ),
    )?;
    Ok(Installed { bin, link })
}

/// The link name krew creates for a plugin: `run-pod` → `kubectl-run_pod` (kubectl
/// maps `_` in a program's name to `-` in the command).
#[cfg(unix)]
pub fn link_name(plugin: &str) -> String {
    format!("kubectl-{}", plugin.replace('-', "_"))
}
