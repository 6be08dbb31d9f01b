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
