//! client-go's `ClientConfigLoadingRules`: which kubeconfig files are read, in which
//! order, and how their failures are reported.

use std::ffi::OsString;
use std::path::PathBuf;

use kube::config::Kubeconfig;

use crate::error::{Error, Result};

/// Where the kubeconfig came from, for error messages and `cluster env`-style output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--kubeconfig PATH`.
    Flag(PathBuf),
    /// The existing files of `KUBECONFIG`, in order.
    Env(Vec<PathBuf>),
    /// `~/.kube/config`.
    Home(PathBuf),
    /// Neither: `--server` alone or the in-cluster environment.
    None,
}

/// The loading rules and the environment they read, passed in (rather than read from
/// the process) so that tests need not mutate the process environment.
#[derive(Debug, Clone, Default)]
pub struct LoadingRules {
    /// client-go's `ExplicitPath` (`--kubeconfig`); empty is not set.
    pub explicit_path: Option<PathBuf>,
    /// `KUBECONFIG`, a list of paths; empty is not set.
    pub kubeconfig_env: Option<OsString>,
    /// The home directory, whose `.kube/config` is the last resort.
    pub home: Option<PathBuf>,
}

impl LoadingRules {
    /// The rules with `explicit_path` and the process's `KUBECONFIG` and home.
    pub fn from_process(explicit_path: Option<PathBuf>) -> Self {
        Self {
            explicit_path,
            kubeconfig_env: std::env::var_os("KUBECONFIG"),
            home: crate::home::dir(),
        }
    }

    /// Finds and merges the kubeconfig files the way client-go's loading rules do:
    /// the explicit path (which must exist: `stat PATH: no such file or directory`),
    /// else every file of `KUBECONFIG` (each once, missing ones skipped), else
    /// `~/.kube/config`. Every file is read before any problem is reported, and every
    /// file that exists but cannot be read or parsed is reported, as client-go's
    /// aggregate does.
    pub fn load(&self) -> Result<(Option<Kubeconfig>, Source)> {
        if let Some(path) = self
            .explicit_path
            .as_ref()
            .filter(|p| !p.as_os_str().is_empty())
        {
            // client-go stats the explicit file first and returns that error when the
            // file does not exist; any other problem is the reading's.
            if let Err(e) = std::fs::metadata(path)
                && e.kind() == std::io::ErrorKind::NotFound
            {
                return Err(Error::KubeconfigMissing(crate::error::go_path_error(
                    "stat", path, &e,
                )));
            }
            let kc = super::read(path)?;
            return Ok((Some(kc), Source::Flag(path.clone())));
        }
        if let Some(list) = self.kubeconfig_env.as_ref().filter(|v| !v.is_empty()) {
            // client-go's `deduplicate`: a file listed twice is read once.
            let mut listed: Vec<PathBuf> = Vec::new();
            for path in std::env::split_paths(list) {
                if !path.as_os_str().is_empty() && !listed.contains(&path) {
                    listed.push(path);
                }
            }
            let (merged, read) = read_all(&listed)?;
            return Ok((merged, Source::Env(read)));
        }
        if let Some(home) = &self.home {
            let path = home.join(".kube").join("config");
            let (merged, read) = read_all(std::slice::from_ref(&path))?;
            if let Some(kc) = merged {
                return Ok((
                    Some(kc),
                    Source::Home(read.into_iter().next().unwrap_or(path)),
                ));
            }
        }
        Ok((None, Source::None))
    }
}

/// client-go's loop over the files of its precedence list: a file that does not exist
/// is skipped, every other one read; each failure is reported (one is an
/// [`Error::Kubeconfig`], several an [`Error::KubeconfigFiles`]), after all were
/// tried. The first file to set a value wins. Also returns the files read.
fn read_all(paths: &[PathBuf]) -> Result<(Option<Kubeconfig>, Vec<PathBuf>)> {
    let mut merged: Option<Kubeconfig> = None;
    let mut read = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if let Err(e) = std::fs::metadata(path)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            continue;
        }
        match super::read(path) {
            Ok(kc) => {
                merged = Some(match merged {
                    None => kc,
                    Some(acc) => acc.merge(kc).map_err(Error::KubeconfigMerge)?,
                });
                read.push(path.clone());
            }
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => Ok((merged, read)),
        1 => Err(errors.remove(0)),
        _ => Err(Error::KubeconfigFiles(errors)),
    }
}
