//! The one moving status line a plugin draws on stderr (rolling-update's bar,
//! create-file `--wait`'s spinner): an indicatif bar on a terminal that keeps the
//! terminal's `^C` on the bar's own line.
//!
//! indicatif pads every line it draws with spaces up to the terminal's last column,
//! so that anything written next starts on a fresh line. That includes the `^C` the
//! terminal itself echoes when Ctrl-C is pressed: it wraps onto the line below, the
//! cursor with it, and indicatif, which clears only the line the cursor is on, then
//! clears the `^C` and leaves the bar above the `error: interrupted by SIGINT` that
//! follows. Stopping the padding [`ECHO_WIDTH`] columns short of the edge leaves room
//! for the echo on the bar's line, where the clear takes both away; anything longer
//! (a line another part of the process writes) still wraps onto a fresh line.

use std::borrow::Cow;
use std::io;

use indicatif::{ProgressBar, ProgressDrawTarget, TermLike};

/// The columns of the terminal's echo of Ctrl-C (`^C`, with `echoctl`, the default).
pub const ECHO_WIDTH: usize = 2;

/// How often the line may be redrawn (indicatif's own default for stderr).
const REFRESH_HZ: u8 = 20;

/// A bar of `len` steps (a spinner with `None`) on stderr, when stderr is a terminal
/// that can redraw it ([`apiclient::term::stderr_is_capable_terminal`]); `None`
/// otherwise, for the plain lines a log wants. The caller sets its style.
pub fn on_stderr(len: Option<u64>) -> Option<ProgressBar> {
    apiclient::term::stderr_is_capable_terminal().then(|| {
        let terminal = EchoRoom(console::Term::buffered_stderr());
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(terminal), REFRESH_HZ);
        ProgressBar::with_draw_target(len, target)
    })
}

/// A terminal that passes indicatif's writes through, except the padding after each
/// line, which ends [`ECHO_WIDTH`] columns short of the edge.
#[derive(Debug)]
struct EchoRoom<T>(T);

impl<T: TermLike> TermLike for EchoRoom<T> {
    fn width(&self) -> u16 {
        self.0.width()
    }

    fn height(&self) -> u16 {
        self.0.height()
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.0.write_str(&short_of_the_edge(s))
    }

    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}

/// indicatif writes a line's text and its padding separately, and no line of a bar
/// is blank: a write of spaces alone is padding. It becomes [`ECHO_WIDTH`] spaces
/// fewer, then an erase to the end of the line (so that nothing drawn earlier shows
/// in the columns left out).
fn short_of_the_edge(s: &str) -> Cow<'_, str> {
    if s.is_empty() || s.bytes().any(|b| b != b' ') {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!(
        "{}\x1b[K",
        " ".repeat(s.len().saturating_sub(ECHO_WIDTH))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A terminal of one row that records what it was sent, and shows it as a
    /// terminal would: a character written past the last column first wraps onto a
    /// new row (xterm's deferred wrap), `\r` goes back to the first column, `ESC[2K`
    /// clears the row and `ESC[K` the rest of it.
    #[derive(Debug, Default)]
    struct Screen {
        rows: Mutex<(Vec<Vec<char>>, usize)>,
    }

    const COLUMNS: usize = 40;

    impl Screen {
        fn type_text(&self, text: &str) {
            let mut guard = self.rows.lock().unwrap();
            let (rows, col) = &mut *guard;
            if rows.is_empty() {
                rows.push(Vec::new());
            }
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\r' => *col = 0,
                    '\x1b' => {
                        let sequence: String = chars
                            .by_ref()
                            .take_while(|c| !c.is_ascii_alphabetic())
                            .collect();
                        let row = rows.last_mut().unwrap();
                        match sequence.as_str() {
                            "[2" => row.clear(),
                            "[" => row.truncate(*col),
                            other => panic!("unexpected escape {other:?}"),
                        }
                    }
                    c => {
                        if *col == COLUMNS {
                            rows.push(Vec::new());
                            *col = 0;
                        }
                        let row = rows.last_mut().unwrap();
                        row.resize(row.len().max(*col), ' ');
                        if *col < row.len() {
                            row[*col] = c;
                        } else {
                            row.push(c);
                        }
                        *col += 1;
                    }
                }
            }
        }

        fn shown(&self) -> Vec<String> {
            let rows = &self.rows.lock().unwrap().0;
            rows.iter()
                .map(|r| r.iter().collect::<String>().trim_end().to_string())
                .collect()
        }
    }

    impl TermLike for &'static Screen {
        fn width(&self) -> u16 {
            COLUMNS as u16
        }
        fn move_cursor_up(&self, n: usize) -> io::Result<()> {
            assert_eq!(n, 0, "a one-line bar never moves up");
            Ok(())
        }
        fn move_cursor_down(&self, n: usize) -> io::Result<()> {
            assert_eq!(n, 0, "a one-line bar never moves down");
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            unreachable!("indicatif does not move right")
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            unreachable!("indicatif does not move left")
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.type_text(&format!("{s}\r\n"));
            Ok(())
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.type_text(s);
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            self.type_text("\r\x1b[2K");
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A bar drawn on `screen` through `wrap`, Ctrl-C echoed, the bar cleared: what
    /// the screen shows then.
    fn interrupted(screen: &'static Screen, wrap: bool) -> Vec<String> {
        let target = if wrap {
            ProgressDrawTarget::term_like(Box::new(EchoRoom(screen)))
        } else {
            ProgressDrawTarget::term_like(Box::new(screen))
        };
        let bar = ProgressBar::with_draw_target(Some(3), target);
        bar.set_style(indicatif::ProgressStyle::with_template("{pos}/{len} {msg}").unwrap());
        bar.set_message("old 2");
        bar.set_position(2);
        bar.force_draw();
        assert_eq!(screen.shown(), ["2/3 old 2"]);
        // The terminal's own echo, at the cursor, as the line discipline writes it.
        screen.type_text("^C");
        bar.finish_and_clear();
        screen.type_text("error: interrupted by SIGINT");
        screen.shown()
    }

    #[test]
    fn the_echo_of_ctrl_c_stays_on_the_bar_s_line_and_goes_with_it() {
        let shown = interrupted(Box::leak(Box::default()), true);
        assert_eq!(shown, ["error: interrupted by SIGINT"]);
        // indicatif's own padding: the echo wraps, and the bar stays.
        let shown = interrupted(Box::leak(Box::default()), false);
        assert_eq!(shown, ["2/3 old 2", "error: interrupted by SIGINT"]);
    }

    #[test]
    fn padding_stops_short_of_the_edge_and_nothing_else_changes() {
        assert_eq!(short_of_the_edge("     "), "   \x1b[K");
        assert_eq!(short_of_the_edge(" "), "\x1b[K");
        assert_eq!(short_of_the_edge(""), "");
        assert_eq!(
            short_of_the_edge("⠁ [00:00:01] new 1/3"),
            "⠁ [00:00:01] new 1/3"
        );
        assert_eq!(short_of_the_edge(" a "), " a ");
    }
}
