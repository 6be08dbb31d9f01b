//! The user's home directory as client-go's `util/homedir.HomeDir` finds it: `$HOME` on
//! Unix; on Windows the first of `%HOME%`, `%HOMEDRIVE%%HOMEPATH%`, `%USERPROFILE%`
//! that holds a `.kube\config`, else the first writable one, else the first that
//! exists, else the first that is set. Windows rarely sets `HOME`, so reading only
//! `HOME` there would find no kubeconfig at all.

use std::path::{Path, PathBuf};

/// The home directory, `None` if nothing is set.
pub fn dir() -> Option<PathBuf> {
    find(
        |name| std::env::var_os(name).map(PathBuf::from),
        cfg!(windows),
        &RealFs,
    )
}

/// What [`find`] asks of the file system (a seam for the tests, which run on Linux).
trait Probe {
    fn is_file(&self, path: &Path) -> bool;
    /// `Some(writable)` for an existing path.
    fn dir_writable(&self, path: &Path) -> Option<bool>;
}

struct RealFs;

impl Probe for RealFs {
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn dir_writable(&self, path: &Path) -> Option<bool> {
        let meta = std::fs::metadata(path).ok()?;
        Some(meta.is_dir() && !meta.permissions().readonly())
    }
}

fn find(var: impl Fn(&str) -> Option<PathBuf>, windows: bool, fs: &dyn Probe) -> Option<PathBuf> {
    let set = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    let home = set(var("HOME"));
    if !windows {
        return home;
    }
    let drive_path = match (set(var("HOMEDRIVE")), set(var("HOMEPATH"))) {
        (Some(drive), Some(path)) => {
            let mut joined = drive.into_os_string();
            joined.push(path.into_os_string());
            Some(PathBuf::from(joined))
        }
        _ => None,
    };
    let profile = set(var("USERPROFILE"));
    // HOMEDRIVE/HOMEPATH before USERPROFILE for a kubeconfig (client-go keeps that
    // order for backwards compatibility), USERPROFILE first otherwise.
    let with_config = [&home, &drive_path, &profile]
        .into_iter()
        .flatten()
        .find(|p| fs.is_file(&p.join(".kube").join("config")));
    if let Some(p) = with_config {
        return Some(p.clone());
    }
    let order: Vec<&PathBuf> = [&home, &profile, &drive_path]
        .into_iter()
        .flatten()
        .collect();
    order
        .iter()
        .find(|p| fs.dir_writable(p) == Some(true))
        .or_else(|| order.iter().find(|p| fs.dir_writable(p).is_some()))
        .or_else(|| order.first())
        .map(|p| (*p).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file system of a few paths: files, writable and read-only directories.
    struct Fake {
        files: Vec<&'static str>,
        writable: Vec<&'static str>,
        readonly: Vec<&'static str>,
    }

    impl Probe for Fake {
        fn is_file(&self, path: &Path) -> bool {
            self.files.iter().any(|f| Path::new(f) == path)
        }
        fn dir_writable(&self, path: &Path) -> Option<bool> {
            if self.writable.iter().any(|d| Path::new(d) == path) {
                Some(true)
            } else if self.readonly.iter().any(|d| Path::new(d) == path) {
                Some(false)
            } else {
                None
            }
        }
    }

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<PathBuf> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| PathBuf::from(v))
        }
    }

    const WINDOWS_ENV: &[(&str, &str)] = &[
        ("HOMEDRIVE", "C:"),
        ("HOMEPATH", "/Users/ann"),
        ("USERPROFILE", "/profiles/ann"),
    ];

    fn empty() -> Fake {
        Fake {
            files: vec![],
            writable: vec![],
            readonly: vec![],
        }
    }

    #[test]
    fn unix_is_home_only() {
        let env = vars(&[("HOME", "/home/ann"), ("USERPROFILE", "/p")]);
        assert_eq!(find(&env, false, &empty()), Some("/home/ann".into()));
        assert_eq!(find(vars(&[("HOME", "")]), false, &empty()), None);
    }

    #[test]
    fn windows_prefers_the_directory_holding_a_kubeconfig() {
        let fs = Fake {
            files: vec!["C:/Users/ann/.kube/config"],
            writable: vec!["/profiles/ann", "C:/Users/ann"],
            readonly: vec![],
        };
        assert_eq!(
            find(vars(WINDOWS_ENV), true, &fs),
            Some("C:/Users/ann".into())
        );
    }

    #[test]
    fn windows_then_takes_the_first_writable_then_existing_then_set_directory() {
        let writable = Fake {
            files: vec![],
            writable: vec!["/profiles/ann", "C:/Users/ann"],
            readonly: vec![],
        };
        assert_eq!(
            find(vars(WINDOWS_ENV), true, &writable),
            Some("/profiles/ann".into())
        );
        let existing = Fake {
            files: vec![],
            writable: vec![],
            readonly: vec!["C:/Users/ann"],
        };
        assert_eq!(
            find(vars(WINDOWS_ENV), true, &existing),
            Some("C:/Users/ann".into())
        );
        assert_eq!(
            find(vars(WINDOWS_ENV), true, &empty()),
            Some("/profiles/ann".into())
        );
        assert_eq!(find(vars(&[]), true, &empty()), None);
    }
}
