//! A pseudo-terminal for the tests that need a plugin's stderr on a terminal (the
//! rolling-update bar, colour decisions).

// A failed terminal or process call is a broken test environment: unwrap says where.
#![allow(clippy::unwrap_used)]

/// A pseudo-terminal (master, slave) of `width` columns, with rustix (a dependency
/// already); it must not become a controlling terminal.
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

/// The lines a terminal of `columns` shows after `bytes`, trailing blanks trimmed:
/// text overwrites from the cursor, `\r` returns to the start of the line, `\n` moves
/// down; a character written past the last column first wraps onto the next line
/// (xterm's deferred wrap: the cursor stays on the last column until then). Of the
/// escape sequences indicatif writes only "erase line" (`ESC[2K`), "erase to the end
/// of the line" (`ESC[K`) and the cursor's moves up and down (`ESC[nA`, `ESC[nB`)
/// move or change text.
pub fn screen(bytes: &[u8], columns: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col) = (0usize, 0usize);
    fn down(row: &mut usize, lines: &mut Vec<Vec<char>>, n: usize) {
        *row += n;
        while *row >= lines.len() {
            lines.push(Vec::new());
        }
    }
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => down(&mut row, &mut lines, 1),
            '\u{1b}' => {
                if chars.next() != Some('[') {
                    continue;
                }
                let mut params = String::new();
                for f in chars.by_ref() {
                    if !f.is_ascii_alphabetic() {
                        params.push(f);
                        continue;
                    }
                    let n = params.parse().unwrap_or(1);
                    match (f, params.as_str()) {
                        ('K', "2") => lines[row].clear(),
                        ('K', "" | "0") => lines[row].truncate(col),
                        ('A', _) => row = row.saturating_sub(n),
                        ('B', _) => down(&mut row, &mut lines, n),
                        _ => {}
                    }
                    break;
                }
            }
            c => {
                if col == columns {
                    down(&mut row, &mut lines, 1);
                    col = 0;
                }
                let line = &mut lines[row];
                if line.len() <= col {
                    line.resize(col, ' ');
                    line.push(c);
                } else {
                    line[col] = c;
                }
                col += 1;
            }
        }
    }
    let mut screen: Vec<String> = lines
        .into_iter()
        .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
        .collect();
    while screen.last().is_some_and(String::is_empty) {
        screen.pop();
    }
    screen
}

#[test]
fn the_screen_wraps_a_character_past_the_last_column() {
    // A bar padded to the last column, then Ctrl-C's echo, then a clear: the echo
    // wrapped, and the clear took it, not the bar.
    let bytes = "a\r\n\x1b[2K1/3   ^C\r\x1b[2Kerror".as_bytes();
    assert_eq!(screen(bytes, 6), ["a", "1/3", "error"]);
    // Padding two columns short of the edge: the echo stays on the bar's line.
    let bytes = "a\r\n1/3 \x1b[K^C\r\x1b[2Kerror".as_bytes();
    assert_eq!(screen(bytes, 6), ["a", "error"]);
    // Erase to the end of the line, cursor moves.
    let bytes = "abcdef\rab\x1b[K\x1b[1Bx\x1b[2Ay".as_bytes();
    assert_eq!(screen(bytes, 6), ["ab y", "  x"]);
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

/// A shell on a pseudo-terminal of its own, driven the way a person at a terminal
/// drives it: keys typed one at a time with pauses, the screen read while it is
/// written, the window resized. The shell is a session leader with the terminal as
/// its controlling terminal (`setsid --ctty`, util-linux), so the terminal's job
/// control works as in a real one: Ctrl-C and Ctrl-Z become signals for the
/// foreground process group, `SIGWINCH` reaches it on a resize, and a program that
/// takes the terminal raw gets the keys as bytes.
pub struct Typist {
    master: std::fs::File,
    transcript: std::sync::Arc<(std::sync::Mutex<Vec<u8>>, std::sync::Condvar)>,
    reader: Option<std::thread::JoinHandle<()>>,
    child: std::process::Child,
    /// How far [`Typist::wait_for`] has read: each wait looks past the last one.
    seen: usize,
}

/// How long one expected text may take to appear: a bound, so that a run that
/// hangs (a stdin read left behind after the session) fails instead of stalling the test run.
pub const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Typist {
    /// Starts `sh -c script` on a new terminal of `cols` × `rows`, with `env` added to
    /// the harness's environment (`PATH` with the plugins and then the release's own
    /// kubectl first, `KUBECONFIG`).
    pub fn start(script: &str, cols: u16, rows: u16, env: &[(&str, &str)]) -> Self {
        use std::process::{Command, Stdio};
        let cluster = tests::harness::cluster();
        let (master, slave) = open_pty(cols);
        let size = rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&master, size).unwrap();
        // The plugins, then the release's own kubectl (checked there), first on PATH.
        let child = Command::new("setsid")
            .args(["--ctty", "sh", "-c", script])
            .env("PATH", cluster.child_path())
            .env("KUBECONFIG", &cluster.kubeconfig)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("TERM", "xterm")
            .env_remove("NO_COLOR")
            .envs(env.iter().copied())
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .unwrap();
        let transcript =
            std::sync::Arc::new((std::sync::Mutex::new(Vec::new()), std::sync::Condvar::new()));
        let mut from_terminal = std::fs::File::from(master.try_clone().unwrap());
        let shared = transcript.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = match std::io::Read::read(&mut from_terminal, &mut buf) {
                    Ok(n @ 1..) => n,
                    // A signal taken by this thread ends a read, not the transcript.
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // EIO once the last process holding the terminal is gone.
                    Ok(0) | Err(_) => break,
                };
                let (text, arrived) = &*shared;
                text.lock().unwrap().extend_from_slice(&buf[..n]);
                arrived.notify_all();
            }
        });
        Typist {
            master: std::fs::File::from(master),
            transcript,
            reader: Some(reader),
            child,
            seen: 0,
        }
    }

    /// Everything the terminal showed so far.
    pub fn transcript(&self) -> Vec<u8> {
        self.transcript.0.lock().unwrap().clone()
    }

    /// Waits until `text` appears after what earlier waits saw; panics with the
    /// transcript after [`WAIT`].
    #[track_caller]
    pub fn wait_for(&mut self, text: &str) {
        let deadline = std::time::Instant::now() + WAIT;
        let (lock, arrived) = &*self.transcript;
        let mut shown = lock.lock().unwrap();
        loop {
            if let Some(at) = find(&shown[self.seen..], text.as_bytes()) {
                self.seen += at + text.len();
                return;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(
                !left.is_zero(),
                "{text:?} did not appear within {WAIT:?}; the terminal shows:\n{:?}\n{}",
                String::from_utf8_lossy(&shown),
                self.session()
            );
            shown = arrived.wait_timeout(shown, left).unwrap().0;
        }
    }

    /// The processes still in the terminal's session, with their state, process
    /// group and the terminal's foreground group (`tpgid`), and the terminal's
    /// local modes: what a failed wait needs to say who holds the terminal
    /// (a reader stopped by `SIGTTIN`, a process left behind, line editing off).
    fn session(&self) -> String {
        // `setsid` execs the shell: the session's id is the spawned child's pid.
        let ps = std::process::Command::new("ps")
            .args(["-s", &self.child.id().to_string()])
            .args(["-o", "pid,ppid,pgid,tpgid,stat,wchan:24,args"])
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_else(|e| format!("ps: {e}"));
        let modes = rustix::pty::ptsname(&self.master, Vec::new())
            .ok()
            .and_then(|name| {
                rustix::fs::open(
                    name.as_c_str(),
                    rustix::fs::OFlags::RDWR
                        | rustix::fs::OFlags::NOCTTY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )
                .ok()
            })
            .and_then(|slave| rustix::termios::tcgetattr(&slave).ok())
            .map(|t| format!("{:?}", t.local_modes));
        format!("the session's processes:\n{ps}local modes: {modes:?}")
    }

    /// Waits until a program has taken the terminal raw (no line editing, no echo):
    /// keys typed before that are echoed by the terminal itself, which a person
    /// typing at human speed never sees but a loaded test machine could.
    #[track_caller]
    pub fn wait_raw(&mut self) {
        use rustix::termios::LocalModes;
        let deadline = std::time::Instant::now() + WAIT;
        let name = rustix::pty::ptsname(&self.master, Vec::new()).unwrap();
        loop {
            // A fresh descriptor each time: one kept open would keep the terminal alive.
            let slave = rustix::fs::open(
                name.as_c_str(),
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
            let modes = rustix::termios::tcgetattr(&slave).unwrap().local_modes;
            if !modes.intersects(LocalModes::ICANON | LocalModes::ECHO) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the terminal was not made raw within {WAIT:?}; it shows:\n{:?}",
                String::from_utf8_lossy(&self.transcript())
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Types `keys` one byte at a time, 30 ms apart, as fingers do.
    pub fn type_keys(&mut self, keys: &str) {
        for key in keys.bytes() {
            std::io::Write::write_all(&mut self.master, &[key]).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
    }

    /// Resizes the window; the kernel sends `SIGWINCH` to the foreground.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let size = rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&self.master, size).unwrap();
    }

    /// Waits for the shell to end (bounded by [`WAIT`]; killed past it) and returns
    /// its exit code and the whole transcript.
    pub fn finish(mut self) -> (Option<i32>, Vec<u8>) {
        let deadline = std::time::Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the shell did not end within {WAIT:?}; the terminal shows:\n{:?}",
                    String::from_utf8_lossy(&self.transcript())
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // The reader ends when no process holds the terminal any more; a program left
        // behind holding it must not stall the test.
        let reader = self.reader.take().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !reader.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        (status.code(), self.transcript())
    }
}

impl Drop for Typist {
    fn drop(&mut self) {
        // A failed test leaves nothing behind: the shell leads its own session and
        // process group, which its kubectl shares (`sh -c` has no job control).
        if let Some(group) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
