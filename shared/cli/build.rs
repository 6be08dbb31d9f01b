//! Build information for every plugin's `--version` (`cli::version`): the git
//! commit and the build date, as kubectl's `version.Info` carries them.
//!
//! Reproducible: the date is `SOURCE_DATE_EPOCH` when set, else the commit's own time
//! (the same rule as the release archives' mtimes), never the clock. A build without
//! git (a source tarball) says `unknown` for what it cannot know, and still builds.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-changed=build.rs");
    // A new commit must refresh the values; these are the files git moves then.
    // `--git-path` also finds them in a worktree, whose `.git` is a file. Only those that
    // exist: cargo counts a missing one as changed on every build, and `packed-refs` is
    // absent until git packs a ref (every `cargo` command then rebuilt this crate and all
    // that depends on it). A ref that gets packed loses its loose file, which is a change.
    for path in ["HEAD", "packed-refs"]
        .into_iter()
        .map(String::from)
        .chain(git(&["symbolic-ref", "-q", "HEAD"]))
        .filter_map(|p| git(&["rev-parse", "--git-path", &p]))
        .filter(|p| std::path::Path::new(p).exists())
    {
        println!("cargo:rerun-if-changed={path}");
    }
    let commit = git(&["rev-parse", "HEAD"]);
    let date = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .or_else(|| git(&["log", "-1", "--format=%ct"]))
        .and_then(|s| s.trim().parse::<i64>().ok())
        .map(rfc3339);
    println!(
        "cargo:rustc-env=KUBEPLUG_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=KUBEPLUG_BUILD_DATE={}",
        date.as_deref().unwrap_or("unknown")
    );
}

/// The trimmed output of a successful git command, else `None` (no git, not a
/// repository, no commit yet).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR")?)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// Seconds since the Unix epoch as kubectl's `buildDate` (`2025-05-15T20:09:34Z`).
/// Hand-written (Howard Hinnant's days-to-civil) to keep the build script free of
/// dependencies.
fn rfc3339(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
