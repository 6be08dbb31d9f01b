//! The container's output from before the attach joined it, joined to the attach's
//! own output without a gap or a line printed twice.
//!
//! How a kubelet serves the two (containerd's CRI, which the real node runs): one
//! reader copies each chunk the container writes to every writer of its stream, the
//! log file's and each attach's; an attach's writer joins between two chunks, some
//! time after its upgrade was answered. So the attach's output is exactly the
//! container's output from one chunk on, and the log holds all of it, a line at a
//! time, each line with the time it was written (`timestamps=true`). kubectl reads
//! the log before it attaches: what the container writes between the two is lost.
//!
//! The rule here: attach first and hold its output; once its first bytes arrive (its
//! writer has joined), read the log so far; print the log up to where those first
//! bytes begin in it, then all of the attach's output. Where the first bytes begin is found by their content (the first
//! line they complete must be in the log, followed by the rest of what arrived); when
//! the content occurs more than once (repeated lines), the lines' timestamps decide:
//! the one written last before the bytes arrived, taking a chunk's lines (written in
//! the same millisecond) from their first.

use std::time::Duration;

use anyhow::{Result, anyhow};
use futures::AsyncReadExt as _;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, LogParams};

/// How long kubectl 1.37 gives the log printed before the attach (its 5 s context).
const PRE_ATTACH_LOG: Duration = Duration::from_secs(5);

/// Lines whose timestamps lie this close were written from one chunk.
const ONE_CHUNK: SignedDuration = SignedDuration::from_millis(1);

/// The log of the attached container, read once the attach joined.
pub struct PreAttach<'a> {
    pods: &'a Api<Pod>,
    pod: &'a str,
    container: Option<String>,
    /// When the log was read (to the second, as `sinceTime` travels), from which a
    /// fallback to the logs goes on.
    pub read_at: Option<Timestamp>,
    /// When the last line printed from the log was written: a fallback to the logs,
    /// which asks from `read_at`'s whole second on, leaves out the lines up to it
    /// (printed already).
    pub printed_through: Option<Timestamp>,
}

impl<'a> PreAttach<'a> {
    pub fn new(pods: &'a Api<Pod>, pod: &'a str, container: Option<String>) -> Self {
        PreAttach {
            pods,
            pod,
            container,
            read_at: None,
            printed_through: None,
        }
    }

    /// The log so far, with its timestamps, within kubectl's 5 s.
    pub async fn read(&mut self) -> Result<Log> {
        let params = LogParams {
            container: self.container.clone(),
            timestamps: true,
            ..Default::default()
        };
        let read = async {
            let mut stream = self.pods.log_stream(self.pod, &params).await?;
            let mut raw = Vec::new();
            stream.read_to_end(&mut raw).await?;
            anyhow::Ok(raw)
        };
        let raw = tokio::time::timeout(PRE_ATTACH_LOG, read)
            .await
            // Go's words for the expired context.
            .map_err(|_| anyhow!("context deadline exceeded"))??;
        self.read_at = Some(Timestamp::from_second(Timestamp::now().as_second())?);
        Ok(Log::parse(&raw))
    }
}

/// A log read with `timestamps=true`: its text without the timestamps, and where
/// each line starts with the time it was written.
#[derive(Debug, Default)]
pub struct Log {
    pub text: Vec<u8>,
    lines: Vec<(usize, Option<Timestamp>)>,
}

impl Log {
    /// The kubelet's `timestamps=true` text: `RFC3339NANO TEXT\n` per line. A line
    /// without a timestamp is kept whole.
    pub fn parse(raw: &[u8]) -> Log {
        let mut log = Log::default();
        for line in raw.split_inclusive(|b| *b == b'\n') {
            let stamped = line.iter().position(|b| *b == b' ').and_then(|space| {
                let at = std::str::from_utf8(&line[..space]).ok()?.parse().ok()?;
                Some((at, &line[space + 1..]))
            });
            let (at, text) = match stamped {
                Some((at, text)) => (Some(at), text),
                None => (None, line),
            };
            log.lines.push((log.text.len(), at));
            log.text.extend_from_slice(text);
        }
        log
    }

    /// Each line's text (its newline included) and when it was written.
    pub fn lines(&self) -> impl Iterator<Item = (&[u8], Option<Timestamp>)> {
        self.lines.iter().enumerate().map(|(i, (start, at))| {
            let end = self
                .lines
                .get(i + 1)
                .map_or(self.text.len(), |(next, _)| *next);
            (&self.text[*start..end], *at)
        })
    }

    /// When the line holding byte `offset` of the text was written.
    pub fn written_at(&self, offset: usize) -> Option<Timestamp> {
        let index = self.lines.partition_point(|(start, _)| *start <= offset);
        self.lines
            .get(index.checked_sub(1)?)
            .and_then(|(_, at)| *at)
    }
}

/// How much of the log's text to print before the attach's output: up to where
/// `first`, the bytes the attach brought first on one stream (everything it held
/// when the log was asked for, the first of them arriving at `arrived`), begin in
/// it. The rest of the log is in the attach's output.
pub fn join(log: &Log, first: &[u8], arrived: Timestamp) -> usize {
    let text = &log.text;
    let all = text.len();
    // Bytes that complete no line are in no line of the log yet: the log is all
    // from before them.
    let Some(newline) = first.iter().position(|b| *b == b'\n') else {
        return all;
    };
    let line = &first[..=newline];
    let mut full = Vec::new();
    let mut to_end = Vec::new();
    let mut line_only = Vec::new();
    for at in 0..=text.len().saturating_sub(line.len()) {
        if !text[at..].starts_with(line) {
            continue;
        }
        let rest = &text[at..];
        let common = rest.iter().zip(first).take_while(|(a, b)| a == b).count();
        if common == first.len() {
            full.push(at);
        } else if common == rest.len() {
            to_end.push(at);
        } else {
            // The other stream's lines are interleaved in the log.
            line_only.push(at);
        }
    }
    // Bytes that came before the log was asked for were written before it was read,
    // so the log holds all of them at the true place. A place where the log ends
    // before they do is a coincidence of text (the log's last line ending as they
    // begin: "51\n" then "1\n2\n…"), unless no place holds them all (the runtime's log
    // writer lagging behind its attach).
    let candidates = [full, to_end, line_only]
        .into_iter()
        .find(|c| !c.is_empty())
        .unwrap_or_default();
    pick(log, &candidates, line.len(), arrived).unwrap_or(all)
}

/// Of the places the attach's first line could begin, the one written last before
/// it arrived (its chunk's first line), or the first of all when no timestamp says.
fn pick(log: &Log, candidates: &[usize], line: usize, arrived: Timestamp) -> Option<usize> {
    let written = |at: usize| log.written_at(at + line - 1);
    let latest = candidates
        .iter()
        .filter_map(|at| written(*at))
        .filter(|t| *t <= arrived)
        .max();
    let Some(latest) = latest else {
        return candidates.first().copied();
    };
    candidates
        .iter()
        .find(|at| {
            written(**at).is_some_and(|t| t <= latest && latest.duration_since(t) <= ONE_CHUNK)
        })
        .copied()
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn timestamps_are_taken_off_each_line() {
        let parsed = Log::parse(b"2026-12-02T06:40:33.123456789Z one two\nno stamp\n");
        assert_eq!(parsed.text, b"one two\nno stamp\n");
        assert_eq!(
            parsed.written_at(0),
            Some("2026-12-02T06:40:33.123456789Z".parse().expect("time"))
        );
        assert_eq!(parsed.written_at(9), None);
    }

    #[test]
    fn the_log_is_printed_up_to_the_attach_s_first_line() {
        let log = log(&[(0, "1"), (0, "2"), (10, "3"), (10, "4")]);
        // The attach joined between the two chunks and brought 3 and 4.
        assert_eq!(log.text.len(), 8);
        assert_eq!(join(&log, b"3\n4\n", at(11)), 4);
        // It held only 3 when the log was read: 4 comes from the attach too.
        assert_eq!(join(&log, b"3\n", at(11)), 4);
    }

    #[test]
    fn a_line_begun_before_the_join_is_printed_from_the_log() {
        let log = log(&[(0, "abcdef"), (0, "g")]);
        assert_eq!(join(&log, b"def\ng\n", at(1)), 3);
    }

    #[test]
    fn the_whole_of_what_arrived_decides_between_lines_that_end_alike() {
        let log = log(&[(0, "1"), (0, "11"), (0, "2"), (0, "12")]);
        // "1\n" ends the first two lines; only the first is followed by what came.
        assert_eq!(join(&log, b"1\n11\n2\n", at(1)), 0);
        assert_eq!(join(&log, b"1\n2\n12\n", at(1)), 3);
    }

    /// Seen on a loaded node: `seq 1 50` in one chunk, then `51` more than a
    /// millisecond later, both written before the chunk arrived. "1\n" also ends the
    /// log's last line; only the log's start holds all that came.
    #[test]
    fn a_log_ending_as_the_attach_begins_is_no_join() {
        let mut lines: Vec<(i64, String)> = (1..=50).map(|i| (0, i.to_string())).collect();
        lines.push((3, "51".to_string()));
        let lines: Vec<(i64, &str)> = lines.iter().map(|(t, l)| (*t, l.as_str())).collect();
        let log = log(&lines);
        let chunk: String = (1..=50).map(|i| format!("{i}\n")).collect();
        assert_eq!(join(&log, chunk.as_bytes(), at(20)), 0);
        // When the log holds nothing of the attach's but that coincidence, the log
        // writer is taken to lag: the log's end is where the attach began.
        let log = self::log(&[(0, "50"), (3, "51")]);
        assert_eq!(join(&log, b"1\n2\n", at(20)), 4);
    }

    #[test]
    fn repeated_lines_are_told_apart_by_when_they_were_written() {
        let log = log(&[(0, "y"), (100, "y"), (100, "y"), (200, "y")]);
        // The chunk of 100 ms arrived at 101: its first line is where the attach began.
        assert_eq!(join(&log, b"y\ny\ny\n", at(101)), 2);
    }

    #[test]
    fn output_the_log_does_not_have_yet_follows_all_of_it() {
        let log = log(&[(0, "one")]);
        assert_eq!(join(&log, b"prompt> ", at(1)), 4);
        assert_eq!(join(&log, b"two\n", at(1)), 4);
        assert_eq!(join(&Log::default(), b"x\n", at(1)), 0);
    }

    #[test]
    fn the_other_stream_s_lines_in_between_keep_what_is_common() {
        let log = log(&[(0, "out1"), (5, "err1"), (5, "out2"), (5, "err2")]);
        assert_eq!(join(&log, b"err1\nerr2\n", at(6)), 5);
    }
}
