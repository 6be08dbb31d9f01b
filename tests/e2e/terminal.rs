//! A pseudo-terminal for the tests that need a plugin's stderr on a terminal (the
//! rolling-update bar, colour decisions).

// A failed terminal or process call is a broken test environment: unwrap says where.
#![allow(clippy::unwrap_used)]

/// A pseudo-terminal (master, slave) of `width` columns. Written here with rustix
/// (already a dependency for the simulated node's TTYs) rather than reusing the
/// node's private helper: this one must not be a controlling terminal either.
pub fn open_pty(width: u16) -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use rustix::fs::{Mode, OFlags, open};
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let size = rustix::termios::Winsize {
        ws_row: 24,
        ws_col: width,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&slave, size).unwrap();
    (master, slave)
}

/// Everything written to the terminal until its last writer closes it (Linux
/// reports that as EIO on the master).
pub fn read_terminal(master: std::os::fd::OwnedFd) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut master, &mut buf) {
                Ok(0) | Err(_) => return all,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
}

/// What a plugin run on a terminal left: its exit code, what its stdout pipe got
/// (empty when stdout was the terminal) and what the terminal got.
pub struct OnTerminal {
    pub code: Option<i32>,
    pub stdout: String,
    pub screen: Vec<u8>,
}

/// Runs `plugin` with stderr on a pseudo-terminal of 120 columns, and stdout on it
/// too or on a pipe, with `TERM=xterm-256color` and no `NO_COLOR` unless `env` sets
/// them.
pub async fn on_terminal(
    plugin: &str,
    args: &[String],
    env: &[(&str, &str)],
    stdout_on_terminal: bool,
) -> OnTerminal {
    use std::process::{Command, Stdio};
    let cluster = tests::harness::cluster();
    let (master, slave) = open_pty(120);
    let terminal = read_terminal(master);
    let child = {
        let mut command = Command::new(
            cluster
                .plugin_dir
                .join(tests::harness::plugin_binary(plugin)),
        );
        command
            .args(args)
            .env("KUBECONFIG", &cluster.kubeconfig)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .envs(env.iter().copied())
            .stdin(Stdio::null());
        if stdout_on_terminal {
            command.stdout(Stdio::from(slave.try_clone().unwrap()));
        } else {
            command.stdout(Stdio::piped());
        }
        command.stderr(Stdio::from(slave));
        // The command, and with it this process's copies of the slave, is dropped
        // here, so the terminal reads EOF once the plugin exits.
        command.spawn().unwrap()
    };
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    OnTerminal {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        screen: terminal.join().unwrap(),
    }
}
