//! The release build of the plugins: the cargo invocations `cargo xtask dist`,
//! `install` and `size` all run, so that what is measured is what ships. Beyond the
//! release profile of `Cargo.toml`, two things decided here (binary size):
//!
//! **Size first where there is no hot loop.** run-pod makes one object per command and
//! rolling-update waits on the API server between its few requests, so they are built
//! with every crate at `opt-level = "z"` ([`SIZE_FIRST`]; `--config` overrides, in a
//! cargo invocation of their own). create-file, which decodes thousands of objects per
//! command, keeps the profile's split (its hot path at "s": `Cargo.toml`). Both
//! invocations share the target directory: the two builds of a shared crate get
//! different hashes and sit side by side. Measured on x86_64-unknown-linux-gnu
//! (2026-11-25, stripped): −95 KB for run-pod, −103 KB for rolling-update, against the
//! profile alone; run-pod's `--dry-run=client -o yaml` took the same CPU with its own
//! crate at "z" (46.6 vs 47.6 ms per 20 runs), and nothing it links is hotter.
//!
//! **Linker arguments** (`--config target.<triple>.rustflags=[…]`, or appended to
//! `RUSTFLAGS` when the environment sets it), measured on x86_64-unknown-linux-gnu. The
//! musl release targets cannot be built here: they get the two that GNU ld (their
//! linker) has, on the grounds below, and the release workflow runs the x86_64 musl
//! binaries before uploading them.
//!
//! - **`-z pack-relative-relocs`** (DT_RELR): a PIE binary's relative relocations
//!   packed into a bitmap. `.rela.dyn` went from 353–381 KB to about 7 KB in each
//!   plugin; the binary stays position-independent (ASLR kept, unlike
//!   `-C relocation-model=static`). glibc loads DT_RELR from 2.36 on and refuses to
//!   start such a binary before that (`GLIBC_ABI_DT_RELR` not found), so a glibc build
//!   gets it only when the C library of the building machine — the one `install` puts
//!   the plugins on — is 2.36 or later. A musl binary is static: its start-up code is
//!   the toolchain's own musl, 1.2.5 from Rust 1.93 on, which applies DT_RELR (musl
//!   1.2.4 added it, static PIE included), so musl builds get it from that toolchain on.
//!   A linker that does not know the option (an old cross image) warns and ignores it.
//! - **`--icf=all`** (identical code folding): functions with the same machine code,
//!   which monomorphisation makes plenty of, kept once: −82 to −99 KB per plugin.
//!   Rust never compares function addresses for identity (they are `unnamed_addr`),
//!   so folding all of them is sound for Rust code. It needs lld, which rustc uses
//!   by default on x86_64-unknown-linux-gnu only (since 1.90); GNU ld has no ICF.
//! - **`--no-eh-frame-hdr`** (lld and GNU ld; every Linux target): the binary-search
//!   index over `.eh_frame`
//!   (98–100 KB per plugin) that an unwinder uses to find a function's frame
//!   description. With `panic = "abort"` nothing ever unwinds; the only reader left is
//!   the frame walk of a panic's `RUST_BACKTRACE` output, which in a stripped binary
//!   lists bare addresses, and without the index lists none (the walk ends at once;
//!   checked: a panic still prints its message and aborts). `.eh_frame` itself cannot
//!   go: the precompiled standard library gives every function a personality routine,
//!   so `-C force-unwind-tables=no` removes nothing without `-Zbuild-std`.

use std::process::Command;

/// The plugins built with every crate at `opt-level = "z"` (see the module).
pub const SIZE_FIRST: [&str; 2] = ["kubectl-run_pod", "kubectl-rolling_update"];

/// The dependencies `Cargo.toml` keeps at `opt-level = "s"` under its `"*"` override at
/// "z": create-file's hot path. The size-first build names each (a named override wins
/// over `"*"`); `hot_crates_are_those_of_the_profile` keeps the two lists the same.
pub const HOT: [&str; 5] = ["granit-parser", "serde_json", "memchr", "itoa", "zmij"];

/// The workspace's library crates, which a `profile.release.package."*"` override does
/// not reach (it covers dependencies outside the workspace only): the size-first build
/// names each. A library missing here is built at the profile's "s" in the size-first
/// binaries, which `size_first_plugins_get_their_own_invocation_at_z` catches.
pub const LIBRARIES: [&str; 6] = [
    "gotext",
    "goyaml",
    "objectstatus",
    "apiclient",
    "resources",
    "cli",
];

/// The cargo invocations that build `bins` with `profile` for `triple` (`--target` when
/// `cross`), `--locked`: the versions in Cargo.lock, never a fresh resolution, so what
/// ships is what was reviewed (and what `cargo deny` checked).
/// `cargo` names the program to run instead of the cargo running xtask (`cross`).
pub fn build_commands(
    cargo: Option<&str>,
    bins: &[&str],
    triple: &str,
    cross: bool,
    profile: &str,
) -> Vec<Command> {
    let release = profile == "release";
    let link = if release {
        link_args(
            triple,
            relr_loadable(triple, glibc_version(), rustc_version()),
        )
    } else {
        Vec::new()
    };
    let env_flags = env_rustflags();
    let (size_first, rest): (Vec<&str>, Vec<&str>) =
        bins.iter().partition(|b| release && SIZE_FIRST.contains(b));
    [(rest, false), (size_first, true)]
        .into_iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(group, small)| {
            let mut cmd = Command::new(cargo.unwrap_or(env!("CARGO")));
            cmd.current_dir(crate::paths::project_root());
            // Flags in the environment override cargo's `rustflags` configuration (the
            // release workflow sets `RUSTFLAGS` for `--remap-path-prefix`): the linker
            // arguments are then appended to them, else given as `--config`.
            let mut link_config = Vec::new();
            if !link.is_empty() {
                match &env_flags {
                    Some(existing) => {
                        cmd.env(
                            "CARGO_ENCODED_RUSTFLAGS",
                            encoded_rustflags(existing, &link),
                        );
                        cmd.env_remove("RUSTFLAGS");
                    }
                    None => link_config = config(triple, &link),
                }
            }
            cmd.args(build_args(
                &group,
                triple,
                cross,
                profile,
                small,
                &link_config,
            ));
            cmd
        })
        .collect()
}

/// The arguments of one invocation (see [`build_commands`]).
fn build_args(
    bins: &[&str],
    triple: &str,
    cross: bool,
    profile: &str,
    size_first: bool,
    link_config: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = ["build", "--locked", "--profile", profile]
        .map(String::from)
        .to_vec();
    args.extend_from_slice(link_config);
    if size_first {
        // `"*"` covers the dependencies only; the workspace's own crates by name, and
        // the dependencies the profile names (they would keep its level).
        args.extend(
            std::iter::once("*")
                .chain(LIBRARIES.iter().copied())
                .chain(HOT.iter().copied())
                .map(|crate_| format!("profile.release.package.{crate_:?}.opt-level=\"z\""))
                .flat_map(|c| ["--config".to_string(), c]),
        );
    }
    if cross {
        args.extend(["--target".to_string(), triple.to_string()]);
    }
    for bin in bins {
        args.extend(["-p".to_string(), bin.to_string()]);
    }
    args
}

/// The compiler flags the environment sets, if it sets any: `CARGO_ENCODED_RUSTFLAGS`
/// (0x1f-separated) first, as cargo reads them, else `RUSTFLAGS` split at whitespace.
fn env_rustflags() -> Option<Vec<String>> {
    if let Some(encoded) = std::env::var_os("CARGO_ENCODED_RUSTFLAGS") {
        return Some(
            encoded
                .to_string_lossy()
                .split('\x1f')
                .filter(|f| !f.is_empty())
                .map(String::from)
                .collect(),
        );
    }
    let flags = std::env::var_os("RUSTFLAGS")?;
    Some(
        flags
            .to_string_lossy()
            .split_whitespace()
            .map(String::from)
            .collect(),
    )
}

fn encoded_rustflags(existing: &[String], args: &[&str]) -> String {
    let mut flags = existing.to_vec();
    for a in args {
        flags.extend(["-C".to_string(), format!("link-arg={a}")]);
    }
    flags.join("\x1f")
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

/// The linker arguments for `triple`; `relr`: whether its C library loads DT_RELR
/// ([`relr_loadable`]).
pub fn link_args(triple: &str, relr: bool) -> Vec<&'static str> {
    let linux = triple.contains("-linux-");
    let mut args = Vec::new();
    if linux && relr {
        args.push("-Wl,-z,pack-relative-relocs");
    }
    if triple == "x86_64-unknown-linux-gnu" {
        args.push("-Wl,--icf=all");
    }
    if linux {
        args.push("-Wl,--no-eh-frame-hdr");
    }
    args
}

/// Whether a binary for `triple` built here starts with DT_RELR relocations: glibc
/// loads them from 2.36 (the building machine's, which `install` puts the plugins on);
/// a musl binary is static and carries the musl of the Rust toolchain, 1.2.5 from Rust
/// 1.93 on, whose static-PIE start-up code applies them (since musl 1.2.4).
fn relr_loadable(triple: &str, glibc: Option<(u32, u32)>, rustc: Option<(u32, u32)>) -> bool {
    if triple.ends_with("-linux-gnu") {
        glibc.is_some_and(|v| v >= (2, 36))
    } else if triple.contains("-linux-musl") {
        rustc.is_some_and(|v| v >= (1, 93))
    } else {
        false
    }
}

/// The Rust toolchain's version, from `rustc -vV` (`release: 1.95.0`).
fn rustc_version() -> Option<(u32, u32)> {
    let release = crate::targets::rustc_verbose("release")?;
    let mut parts = release.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
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
    fn relr_only_where_the_c_library_loads_it_and_lld_options_only_with_lld() {
        let gnu = "x86_64-unknown-linux-gnu";
        assert_eq!(
            link_args(gnu, true),
            [
                "-Wl,-z,pack-relative-relocs",
                "-Wl,--icf=all",
                "-Wl,--no-eh-frame-hdr"
            ]
        );
        assert_eq!(
            link_args(gnu, false),
            ["-Wl,--icf=all", "-Wl,--no-eh-frame-hdr"]
        );
        let musl = "x86_64-unknown-linux-musl";
        assert_eq!(
            link_args(musl, true),
            ["-Wl,-z,pack-relative-relocs", "-Wl,--no-eh-frame-hdr"]
        );
        for other in [
            "aarch64-apple-darwin",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-msvc",
        ] {
            assert!(link_args(other, true).is_empty(), "{other}");
        }
        assert!(relr_loadable(gnu, Some((2, 36)), None));
        assert!(!relr_loadable(gnu, Some((2, 35)), Some((1, 95))));
        assert!(!relr_loadable(gnu, None, Some((1, 95))));
        assert!(relr_loadable(musl, None, Some((1, 93))));
        assert!(!relr_loadable(musl, Some((2, 39)), Some((1, 92))));
        assert!(!relr_loadable(
            "aarch64-apple-darwin",
            Some((2, 39)),
            Some((1, 95))
        ));
    }

    /// The arguments of each command, as text.
    fn args_of(commands: Vec<Command>) -> Vec<Vec<String>> {
        commands
            .iter()
            .map(|c| {
                c.get_args()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect()
            })
            .collect()
    }

    /// The crates of `shared/` the plugins link: named in a plugin's `[dependencies]`,
    /// or in those of a crate so linked (a dev-dependency, as the tests' scripted API
    /// server, is in no binary).
    fn linked_libraries() -> std::collections::BTreeSet<String> {
        let root = crate::paths::project_root();
        let dependencies = |manifest: std::path::PathBuf| -> Vec<String> {
            let text = std::fs::read_to_string(&manifest).expect("a manifest");
            let table = text.split("\n[dependencies]\n").nth(1).unwrap_or_default();
            let table = table.split("\n[").next().unwrap_or_default();
            table
                .lines()
                .filter_map(|l| l.split(['.', ' ', '=']).next())
                .filter(|name| root.join("shared").join(name).join("Cargo.toml").is_file())
                .map(String::from)
                .collect()
        };
        let mut linked = std::collections::BTreeSet::new();
        let mut next: Vec<String> = ["run-pod", "create-file", "rolling-update"]
            .iter()
            .flat_map(|p| dependencies(root.join("plugins").join(p).join("Cargo.toml")))
            .collect();
        while let Some(library) = next.pop() {
            if linked.insert(library.clone()) {
                next.extend(dependencies(
                    root.join("shared").join(&library).join("Cargo.toml"),
                ));
            }
        }
        linked
    }

    #[test]
    fn hot_crates_are_those_of_the_profile() {
        // The dependencies `Cargo.toml` keeps at "s" (under `"*"` at "z") are the ones
        // the size-first build puts back at "z": a name missing from `HOT` would stay
        // at "s" in run-pod and rolling-update.
        let manifest = std::fs::read_to_string(crate::paths::project_root().join("Cargo.toml"))
            .expect("Cargo.toml");
        let mut at_s = Vec::new();
        let mut package = None;
        for line in manifest.lines() {
            if let Some(name) = line
                .strip_prefix("[profile.release.package.")
                .and_then(|l| l.strip_suffix(']'))
            {
                package = Some(name.trim_matches('"').to_string());
            } else if line.starts_with('[') {
                package = None;
            } else if line.trim() == "opt-level = \"s\""
                && let Some(name) = &package
            {
                at_s.push(name.clone());
            }
        }
        let mut hot = HOT.map(String::from).to_vec();
        hot.sort();
        at_s.sort();
        assert_eq!(at_s, hot);
        let commands = args_of(build_commands(
            None,
            &["kubectl-run_pod"],
            "x86_64-unknown-linux-gnu",
            false,
            "release",
        ));
        for crate_ in HOT {
            let config = format!("profile.release.package.\"{crate_}\".opt-level=\"z\"");
            assert!(commands[0].contains(&config), "{crate_} is not built at z");
        }
    }

    #[test]
    fn size_first_plugins_get_their_own_invocation_at_z() {
        let bins = [
            "kubectl-run_pod",
            "kubectl-create_file",
            "kubectl-rolling_update",
        ];
        let gnu = "x86_64-unknown-linux-gnu";
        let commands = args_of(build_commands(None, &bins, gnu, false, "release"));
        assert_eq!(commands.len(), 2);
        assert!(commands[0].ends_with(&["-p".into(), "kubectl-create_file".into()]));
        assert!(!commands[0].iter().any(|a| a.contains("opt-level")));
        assert!(commands[1].contains(&"profile.release.package.\"*\".opt-level=\"z\"".into()));
        // Every library crate the plugins link, by name: `"*"` does not reach them.
        for library in linked_libraries() {
            let config = format!("profile.release.package.\"{library}\".opt-level=\"z\"");
            assert!(commands[1].contains(&config), "{library} is not built at z");
        }
        assert_eq!(
            linked_libraries().into_iter().collect::<Vec<_>>(),
            {
                let mut all = LIBRARIES.map(String::from).to_vec();
                all.sort();
                all
            },
            "the libraries built at z are those the plugins link"
        );
        assert!(commands[1].ends_with(&[
            "-p".into(),
            "kubectl-run_pod".into(),
            "-p".into(),
            "kubectl-rolling_update".into()
        ]));
        // A dev build is one invocation with no overrides.
        let dev = args_of(build_commands(None, &bins, gnu, false, "dev"));
        assert_eq!(dev.len(), 1);
        assert_eq!(dev[0][..4], ["build", "--locked", "--profile", "dev"]);
        assert!(!dev[0].iter().any(|a| a == "--config"));
        let cross = build_args(
            &["kubectl-run_pod"],
            "aarch64-apple-darwin",
            true,
            "release",
            true,
            &[],
        );
        assert!(
            cross
                .windows(2)
                .any(|w| w == ["--target", "aarch64-apple-darwin"])
        );
    }

    #[test]
    fn flags_from_the_environment_are_kept_and_extended() {
        let existing = vec!["--remap-path-prefix=/w=/kubeplug".to_string()];
        assert_eq!(
            encoded_rustflags(&existing, &["-Wl,--icf=all"]),
            "--remap-path-prefix=/w=/kubeplug\x1f-C\x1flink-arg=-Wl,--icf=all"
        );
        assert_eq!(encoded_rustflags(&[], &[]), "");
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
