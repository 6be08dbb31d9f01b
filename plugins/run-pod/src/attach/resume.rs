//! After an attach cut short (its API server died, a balancer dropped it, the peer went
//! silent): the container's output from exactly where the attach's broke off, read
//! from its log on a new connection and followed until the container ends, so that
//! no line is lost or printed twice. kubectl prints the log once, from its start:
//! lines twice, and what the container writes after that read, never.
//!
//! The log (`timestamps=true`) has every line with the time it was written; the attach
//! brought bytes, each chunk with the time it arrived. Where the printed output ends
//! in the log is found as `replay` finds where it begins: by content (each stream's
//! last printed line, and the lines before it), and where the content repeats, by
//! time (the occurrence written last before that line arrived: the node's clock and
//! ours taken as one). stdout and stderr are one log, so a stream's lines are told
//! from the other's by walking back through what that stream printed. The lines after
//! the cut are printed to stdout, as the log gives them (it does not say which stream
//! a line came from). Then the log is followed: each line carries its time, so a
//! follow that breaks too goes on from the last line printed, on a new request.

use std::io::Write;

use anyhow::Result;
use futures::AsyncBufReadExt as _;
use futures::AsyncReadExt as _;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, LogParams};

use super::replay::Log;

/// The most of each stream's printed output kept to find where it ends in the log.
const TAIL_BYTES: usize = 64 * 1024;

/// How far before the last printed output the log is read from: more than any line
/// takes from the container to us, so every line not printed is in what is read.
const LOOK_BACK: SignedDuration = SignedDuration::from_secs(10);

/// How many follows in a row may break without printing a line before the command
/// gives up (each one a new request).
const FOLLOWS_WITHOUT_PROGRESS: usize = 3;

/// What the attach printed of each stream (0 stdout, 1 stderr): its last bytes and
/// when the last of them arrived.
#[derive(Debug, Default)]
pub struct Printed {
    streams: [Tail; 2],
}

#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
    /// Bytes were dropped from the front (so its first line may be partial).
    cut: bool,
    arrived: Option<Timestamp>,
}

impl Printed {
    /// Records `bytes` of stream `which`, printed, having arrived at `arrived`.
    pub fn record(&mut self, which: usize, bytes: &[u8], arrived: Timestamp) {
        let Some(tail) = self.streams.get_mut(which) else {
            return;
        };
        tail.bytes.extend_from_slice(bytes);
        if tail.bytes.len() > TAIL_BYTES {
            let drop = tail.bytes.len() - TAIL_BYTES;
            tail.bytes.drain(..drop);
            tail.cut = true;
        }
        tail.arrived = Some(arrived);
    }

    /// When the last printed bytes arrived, if any did.
    fn last_arrival(&self) -> Option<Timestamp> {
        self.streams.iter().filter_map(|t| t.arrived).max()
    }
}

/// Where a stream's printed output ends in the log.
struct End {
    /// The log line its last complete printed line is.
    line: Option<usize>,
    /// The lines (at most up to `line`) it printed, found walking back.
    matched: Vec<usize>,
    /// What it printed of the line after (no newline yet).
    partial: Vec<u8>,
    /// The tail kept is not all the stream printed.
    cut: bool,
}

/// How many bytes of each log line were printed already: by the replay before the
/// attach (the lines written up to `replayed_through`) and by the attach (`printed`).
pub fn already_printed(
    log: &Log,
    printed: &Printed,
    replayed_through: Option<Timestamp>,
) -> Vec<usize> {
    let lines: Vec<(&[u8], Option<Timestamp>)> = log.lines().collect();
    let mut done: Vec<usize> = lines
        .iter()
        .map(|(text, at)| match (at, replayed_through) {
            (Some(at), Some(through)) if *at <= through => text.len(),
            _ => 0,
        })
        .collect();
    let mut ends: Vec<End> = printed
        .streams
        .iter()
        .filter(|t| !t.bytes.is_empty())
        .map(|t| locate(&lines, t))
        .collect();
    // The stream that ends later in the log last: every line up to the other's end
    // was printed (both streams were delivered up to there), and after it only the
    // later stream's own lines, found walking back through what it printed.
    ends.sort_by_key(|e| e.line.map_or(0, |l| l + 1));
    let mut floor = 0;
    if let Some((last, earlier)) = ends.split_last() {
        for line in earlier.iter().filter_map(|e| e.line) {
            floor = floor.max(line + 1);
        }
        if last.cut
            && let Some(oldest) = last.matched.iter().min()
        {
            // Lines older than what the tail kept of the stream: printed.
            floor = floor.max(*oldest);
        }
        for &m in &last.matched {
            done[m] = lines[m].0.len();
        }
    }
    for (d, (text, _)) in done.iter_mut().zip(&lines).take(floor) {
        *d = text.len();
    }
    // A line the attach printed part of: the rest of it is to come.
    for end in &ends {
        if end.partial.is_empty() {
            continue;
        }
        let after = end.line.map_or(0, |l| l + 1);
        if let Some(i) =
            (after..lines.len()).find(|&i| done[i] == 0 && lines[i].0.starts_with(&end.partial))
        {
            done[i] = end.partial.len();
        }
    }
    done
}

/// Where one stream's printed output ends in the log's `lines`.
fn locate(lines: &[(&[u8], Option<Timestamp>)], tail: &Tail) -> End {
    let complete = tail
        .bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |newline| newline + 1);
    let partial = tail.bytes[complete..].to_vec();
    let mut printed: Vec<&[u8]> = tail.bytes[..complete]
        .split_inclusive(|b| *b == b'\n')
        .collect();
    if tail.cut && !printed.is_empty() {
        // Its start was dropped: it may be the end of a line only.
        printed.remove(0);
    }
    let Some(last) = printed.last() else {
        return End {
            line: None,
            matched: Vec::new(),
            partial,
            cut: tail.cut,
        };
    };
    let candidates: Vec<(usize, Vec<usize>)> = lines
        .iter()
        .enumerate()
        .filter(|(_, (text, _))| text == last)
        .map(|(i, _)| (i, walk_back(lines, &printed, i)))
        .collect();
    // Written before the last bytes arrived: it cannot have been printed otherwise.
    let in_time = |i: usize| match (lines[i].1, tail.arrived) {
        (Some(at), Some(arrived)) => at <= arrived,
        _ => true,
    };
    let timely: Vec<&(usize, Vec<usize>)> =
        candidates.iter().filter(|(i, _)| in_time(*i)).collect();
    let pool = if timely.is_empty() {
        candidates.iter().collect()
    } else {
        timely
    };
    // The one the most printed lines lead up to; of those, the latest.
    let best = pool
        .into_iter()
        .max_by_key(|(i, matched)| (matched.len(), *i))
        .cloned();
    match best {
        Some((line, matched)) => End {
            line: Some(line),
            matched,
            partial,
            cut: tail.cut,
        },
        None => End {
            line: None,
            matched: Vec::new(),
            partial,
            cut: tail.cut,
        },
    }
}

/// The log lines, from `end` back, that are the stream's `printed` lines in order
/// (`end` itself included); a line that is not the next one back is the other
/// stream's.
fn walk_back(lines: &[(&[u8], Option<Timestamp>)], printed: &[&[u8]], end: usize) -> Vec<usize> {
    let mut matched = vec![end];
    let mut want = printed.len().saturating_sub(1);
    let mut at = end;
    while want > 0 && at > 0 {
        at -= 1;
        if lines[at].0 == printed[want - 1] {
            matched.push(at);
            want -= 1;
        }
    }
    matched
}

/// The position in the log after the last line printed: the time it was written and
/// how many lines written at that very time were printed.
#[derive(Debug, Default, Clone, Copy)]
struct Position {
    at: Option<Timestamp>,
    same: usize,
}

impl Position {
    /// Whether a line written at `at` is one already printed (`seen` counts the lines
    /// at `self.at` met so far in this read), advancing past it otherwise.
    fn take(&mut self, at: Option<Timestamp>, seen: &mut usize) -> bool {
        let (Some(at), Some(last)) = (at, self.at) else {
            if at.is_some() {
                *self = Position { at, same: 1 };
                *seen = 1;
            }
            return true;
        };
        if at < last {
            return false;
        }
        if at == last {
            *seen += 1;
            if *seen <= self.same {
                return false;
            }
            self.same += 1;
            return true;
        }
        *self = Position {
            at: Some(at),
            same: 1,
        };
        *seen = 1;
        true
    }

    /// `sinceTime` for a read from here: its whole second (the API's precision).
    fn since(&self) -> Option<Timestamp> {
        self.at
            .and_then(|at| Timestamp::from_second(at.as_second()).ok())
    }
}

/// Prints the container's output from where the attach's printed output ends, then
/// follows its log until the container ends.
pub async fn follow(
    pods: &Api<Pod>,
    pod: &str,
    container: Option<String>,
    printed: &Printed,
    replayed_through: Option<Timestamp>,
) -> Result<()> {
    let mut out = apiclient::output::Stdout;
    // The log from a little before the last printed output (its whole second).
    let last = [printed.last_arrival(), replayed_through]
        .into_iter()
        .flatten()
        .max();
    let since = last
        .and_then(|t| t.checked_sub(LOOK_BACK).ok())
        .and_then(|t| Timestamp::from_second(t.as_second()).ok());
    let params = LogParams {
        container: container.clone(),
        timestamps: true,
        since_time: since,
        ..Default::default()
    };
    let mut raw = Vec::new();
    pods.log_stream(pod, &params)
        .await?
        .read_to_end(&mut raw)
        .await?;
    let log = Log::parse(&raw);
    let done = already_printed(&log, printed, replayed_through);
    let mut position = Position {
        at: since.and_then(|s| s.checked_sub(SignedDuration::from_nanos(1)).ok()),
        same: 0,
    };
    let mut seen = 0;
    for ((text, at), done) in log.lines().zip(done) {
        position.take(at, &mut seen);
        out.write_all(&text[done..])?;
    }
    out.flush()?;
    // Then what comes, until the container ends (the kubelet ends the follow then).
    let mut failures = 0;
    loop {
        let params = LogParams {
            container: container.clone(),
            timestamps: true,
            follow: true,
            since_time: position.since(),
            ..Default::default()
        };
        let mut lines = pods.log_stream(pod, &params).await?;
        let mut seen = 0;
        let mut line = Vec::new();
        let mut progressed = false;
        let broke = loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) => break None,
                Ok(_) => {}
                Err(e) => break Some(e),
            }
            let log = Log::parse(&line);
            // A line without its newline is the log's last (a broken follow is an
            // error, and the line is read again whole).
            let Some((text, at)) = log.lines().next() else {
                continue;
            };
            if position.take(at, &mut seen) {
                out.write_all(text)?;
                out.flush()?;
                progressed = true;
            }
        };
        let Some(e) = broke else {
            return Ok(());
        };
        failures = if progressed { 1 } else { failures + 1 };
        if failures >= FOLLOWS_WITHOUT_PROGRESS {
            return Err(anyhow::Error::new(e).context("following the container's log"));
        }
        tracing::debug!("the log's follow broke ({e}); following again from the last line printed");
    }
}

#[cfg(test)]
mod tests;
