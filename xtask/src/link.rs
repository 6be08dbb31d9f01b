//! Linker arguments of a release build beyond the profile (issue 21, binary size),
//! passed by `cargo xtask dist`, `install` and `size` alike as
//! `--config target.<triple>.rustflags=[…]`, so that what is measured is what ships.
//!
//! Two, each where it is known to work, measured on x86_64-unknown-linux-gnu
//! (2026-11-25, release profile, stripped):
//!
//! - **`-z pack-relative-relocs`** (DT_RELR): a PIE binary's relative relocations
//!   packed into a bitmap. `.rela.dyn` went from 353–381 KB to about 7 KB in each
//!   plugin; the binary stays position-independent (ASLR kept, unlike
//!   `-C relocation-model=static`). glibc loads DT_RELR from 2.36 on and refuses to
//!   start such a binary before that (`GLIBC_ABI_DT_RELR` not found), so a glibc build
//!   gets it only when the C library of the building machine — the one `install` puts
//!   the plugins on — is 2.36 or later. musl's loader reads DT_RELR from 1.2.4, but the
//!   musl release targets are not built here to check it, so they do not get it yet.
//! - **`--icf=all`** (identical code folding): functions with the same machine code,
//!   which monomorphisation makes plenty of, kept once: −82 to −99 KB per plugin.
//!   Rust never compares function addresses for identity (they are `unnamed_addr`),
//!   so folding all of them is sound for Rust code. It needs lld, which rustc uses
//!   by default on x86_64-unknown-linux-gnu only (since 1.90); GNU ld has no ICF.

use std::process::Command;

/// The `--config` arguments for a release build of `triple` on this machine.
pub fn release_config(triple: &str) -> Vec<String> {
    config(triple, &link_args(triple, glibc_version()))
}

/// `--config target.<triple>.rustflags=["-C", "link-arg=…", …]` for `args`.
fn config(triple: &str, args: &[&str]) -> Vec<String> {
    if args.is_empty() {
        return Vec::new();
    }
    let flags: Vec<String> = args
        .iter()
        .flat_map(|a| ["\"-C\"".to_string(), format!("\"link-arg={a}\"")])
        .collect();
    vec![
        "--config".to_string(),
        format!("target.{triple}.rustflags=[{}]", flags.join(", ")),
    ]
}

/// The linker arguments for `triple`, given the host's glibc version (see the module).
pub fn link_args(triple: &str, glibc: Option<(u32, u32)>) -> Vec<&'static str> {
    let mut args = Vec::new();
    if triple.ends_with("-linux-gnu") && glibc.is_some_and(|v| v >= (2, 36)) {
        args.push("-Wl,-z,pack-relative-relocs");
    }
    if triple == "x86_64-unknown-linux-gnu" {
        args.push("-Wl,--icf=all");
    }
    args
}

/// This machine's glibc version, from `getconf GNU_LIBC_VERSION` (`glibc 2.36`).
fn glibc_version() -> Option<(u32, u32)> {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    parse_glibc(&String::from_utf8_lossy(&out.stdout))
}

fn parse_glibc(text: &str) -> Option<(u32, u32)> {
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()?
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relr_only_where_the_c_library_loads_it_and_icf_only_with_lld() {
        let gnu = "x86_64-unknown-linux-gnu";
        assert_eq!(
            link_args(gnu, Some((2, 36))),
            ["-Wl,-z,pack-relative-relocs", "-Wl,--icf=all"]
        );
        assert_eq!(link_args(gnu, Some((2, 35))), ["-Wl,--icf=all"]);
        assert_eq!(link_args(gnu, None), ["-Wl,--icf=all"]);
        assert_eq!(
            link_args("aarch64-unknown-linux-gnu", Some((2, 39))),
            ["-Wl,-z,pack-relative-relocs"]
        );
        for other in [
            "x86_64-unknown-linux-musl",
            "aarch64-apple-darwin",
            "x86_64-pc-windows-msvc",
        ] {
            assert!(link_args(other, Some((2, 39))).is_empty(), "{other}");
        }
    }

    #[test]
    fn glibc_versions_are_read_from_getconf() {
        assert_eq!(parse_glibc("glibc 2.36\n"), Some((2, 36)));
        assert_eq!(parse_glibc("glibc 2.39"), Some((2, 39)));
        assert_eq!(parse_glibc("glibc 2.28.9000"), Some((2, 28)));
        assert_eq!(parse_glibc("musl"), None);
    }

    #[test]
    fn the_config_is_a_toml_array_of_rustc_arguments() {
        assert!(config("x86_64-pc-windows-msvc", &[]).is_empty());
        assert_eq!(
            config(
                "x86_64-unknown-linux-gnu",
                &["-Wl,-z,pack-relative-relocs", "-Wl,--icf=all"]
            ),
            [
                "--config",
                "target.x86_64-unknown-linux-gnu.rustflags=[\"-C\", \"link-arg=-Wl,-z,pack-relative-relocs\", \"-C\", \"link-arg=-Wl,--icf=all\"]"
            ]
        );
    }
}
