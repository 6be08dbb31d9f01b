//! Where the printed output ends in the log, and the follow's position.

use super::*;

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(1_700_000_000_000 + ms).expect("time")
}

fn log(lines: &[(i64, &str)]) -> Log {
    let raw: String = lines
        .iter()
        .map(|(ms, text)| format!("{} {text}\n", at(*ms)))
        .collect();
    Log::parse(raw.as_bytes())
}

fn printed(streams: &[(usize, &str, i64)]) -> Printed {
    let mut p = Printed::default();
    for (which, bytes, arrived) in streams {
        p.record(*which, bytes.as_bytes(), at(*arrived));
    }
    p
}

/// The lines still to print, as text.
fn rest(log: &Log, done: &[usize]) -> String {
    log.lines()
        .zip(done)
        .map(|((text, _), done)| String::from_utf8_lossy(&text[*done..]).into_owned())
        .collect()
}

#[test]
fn the_log_goes_on_after_the_last_line_the_attach_printed() {
    let log = log(&[(0, "1"), (1000, "2"), (2000, "3"), (3000, "4"), (4000, "5")]);
    let p = printed(&[(0, "2\n", 1001), (0, "3\n", 2001)]);
    // The replay printed line 1 before the attach joined.
    let done = already_printed(&log, &p, Some(at(0)));
    assert_eq!(rest(&log, &done), "4\n5\n");
    // Written after the cut only: all of it comes.
    let done = already_printed(&log, &Printed::default(), Some(at(0)));
    assert_eq!(rest(&log, &done), "2\n3\n4\n5\n");
}

#[test]
fn repeated_lines_are_placed_by_when_the_last_one_arrived() {
    let log = log(&[(0, "y"), (100, "y"), (200, "y"), (300, "y"), (400, "y")]);
    let p = printed(&[(0, "y\ny\ny\n", 201)]);
    let done = already_printed(&log, &p, None);
    assert_eq!(rest(&log, &done), "y\ny\n");
}

#[test]
fn a_line_printed_in_part_is_finished() {
    let log = log(&[(0, "1"), (10, "2"), (20, "abcdef"), (30, "3")]);
    let p = printed(&[(0, "1\n2\nabc", 25)]);
    let done = already_printed(&log, &p, None);
    assert_eq!(rest(&log, &done), "def\n3\n");
}

#[test]
fn the_other_stream_s_lines_after_its_own_end_are_still_to_come() {
    // stderr's last line never arrived; stdout's did.
    let log = log(&[
        (0, "out1"),
        (5, "err1"),
        (10, "out2"),
        (11, "err2"),
        (12, "out3"),
        (20, "out4"),
    ]);
    let p = printed(&[(0, "out1\n", 1), (1, "err1\n", 6), (0, "out2\nout3\n", 13)]);
    let done = already_printed(&log, &p, None);
    assert_eq!(rest(&log, &done), "err2\nout4\n");
}

#[test]
fn a_kept_tail_that_lost_its_start_still_places_the_end() {
    let lines: Vec<(i64, String)> = (0..20_000).map(|i| (i, format!("line {i}"))).collect();
    let borrowed: Vec<(i64, &str)> = lines.iter().map(|(t, s)| (*t, s.as_str())).collect();
    let log = log(&borrowed);
    let all: String = lines[..19_990]
        .iter()
        .map(|(_, s)| format!("{s}\n"))
        .collect();
    let p = printed(&[(0, &all, 19_990)]);
    let done = already_printed(&log, &p, None);
    let expected: String = lines[19_990..]
        .iter()
        .map(|(_, s)| format!("{s}\n"))
        .collect();
    assert_eq!(rest(&log, &done), expected);
}

#[test]
fn a_follow_skips_what_was_printed_to_the_nanosecond() {
    let t = at(5);
    let mut position = Position {
        at: Some(t),
        same: 2,
    };
    let mut seen = 0;
    assert!(!position.take(Some(at(4)), &mut seen));
    // The two lines written at `t` were printed; a third at `t` was not.
    assert!(!position.take(Some(t), &mut seen));
    assert!(!position.take(Some(t), &mut seen));
    assert!(position.take(Some(t), &mut seen));
    assert!(position.take(Some(at(6)), &mut seen));
    assert!(position.take(Some(at(6)), &mut seen));
    assert_eq!(position.same, 2);
    assert_eq!(position.since(), Some(at(0)));
}
