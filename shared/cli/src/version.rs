//! `--version`: the build's version, git commit and build date, worded as
//! `kubectl version --client` (`Client Version: v1.32.4`) with the commit and date
//! that kubectl keeps for `-o yaml`. The values come from `shared/cli/build.rs`.

/// The workspace version (all plugins share it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit the binary was built from, `unknown` without git (a source tarball).
pub const GIT_COMMIT: &str = env!("KUBEPLUG_GIT_COMMIT");
/// `SOURCE_DATE_EPOCH`, else the commit's time, as `2025-05-15T20:09:34Z`; `unknown`
/// without either.
pub const BUILD_DATE: &str = env!("KUBEPLUG_BUILD_DATE");

/// The text `--version` prints.
pub fn text() -> String {
    format!("Client Version: v{VERSION}\nGit Commit: {GIT_COMMIT}\nBuild Date: {BUILD_DATE}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_like_lines() {
        let text = text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!("Client Version: v{}", env!("CARGO_PKG_VERSION"))
        );
        let commit = lines[1].strip_prefix("Git Commit: ").expect("commit line");
        assert!(
            commit == "unknown"
                || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
            "{commit}"
        );
        let date = lines[2].strip_prefix("Build Date: ").expect("date line");
        assert!(
            date == "unknown" || (date.len() == 20 && date.ends_with('Z')),
            "{date}"
        );
    }
}
