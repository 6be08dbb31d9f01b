//! Whether stderr gets colour, decided once for every coloured output (the `-v` logs,
//! the `Warning:` lines) as kubectl's `term.AllowsColorOutput` decides it.

use std::ffi::OsString;
use std::io::IsTerminal as _;

/// kubectl's `term.AllowsColorOutput`: only on a terminal; never with `TERM=dumb` or
/// with `NO_COLOR` set (to anything, even empty: kubectl checks presence, as
/// <https://no-color.org> first said); on Windows only inside Windows Terminal
/// (`WT_SESSION`), since older consoles print escape codes as text.
pub fn allows_color(
    is_terminal: bool,
    var: impl Fn(&str) -> Option<OsString>,
    windows: bool,
) -> bool {
    is_terminal
        && var("TERM").is_none_or(|t| t != "dumb")
        && var("NO_COLOR").is_none()
        && (!windows || var("WT_SESSION").is_some_and(|s| !s.is_empty()))
}

/// [`allows_color`] for this process's stderr and environment.
pub fn stderr_allows_color() -> bool {
    allows_color(
        std::io::stderr().is_terminal(),
        |name| std::env::var_os(name),
        cfg!(windows),
    )
}

/// Whether stderr can show a redrawn progress bar: a terminal that is not `dumb` (a
/// dumb terminal cannot move the cursor). The bars have no colour, so `NO_COLOR` does
/// not hide them.
pub fn stderr_is_capable_terminal() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn colour_only_on_a_terminal() {
        assert!(allows_color(
            true,
            env(&[("TERM", "xterm-256color")]),
            false
        ));
        assert!(allows_color(true, env(&[]), false));
        assert!(!allows_color(
            false,
            env(&[("TERM", "xterm-256color")]),
            false
        ));
    }

    #[test]
    fn no_color_and_dumb_terminals_turn_it_off() {
        assert!(!allows_color(true, env(&[("NO_COLOR", "1")]), false));
        // Presence is enough, as in kubectl.
        assert!(!allows_color(true, env(&[("NO_COLOR", "")]), false));
        assert!(!allows_color(true, env(&[("TERM", "dumb")]), false));
        assert!(allows_color(true, env(&[("TERM", "dumb-ish")]), false));
    }

    #[test]
    fn windows_needs_windows_terminal() {
        assert!(!allows_color(true, env(&[]), true));
        assert!(allows_color(true, env(&[("WT_SESSION", "abc")]), true));
        assert!(!allows_color(
            true,
            env(&[("WT_SESSION", "abc"), ("NO_COLOR", "1")]),
            true
        ));
    }
}
