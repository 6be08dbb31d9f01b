//! Reading the klog lines of a `-v` run, the plugins' and kubectl's alike: the
//! requests their `"Response"` lines name, and the normalisation their comparison
//! allows (the time, the pid, the source line and the millisecond figures, which no
//! two runs share).

/// Whether `line` starts with klog's header (`I1202 01:36:33.962901 …`).
pub fn is_klog(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 30
        && matches!(b[0], b'E' | b'W' | b'I')
        && b[1..5].iter().all(u8::is_ascii_digit)
        && b[5] == b' '
        && b[14] == b'.'
}

/// `line` with its header's time, pid and source line replaced
/// (`I0000 00:00:00.000000       0 round_trippers.go:N] …`) and every
/// `…milliseconds=N` figure as `N`; any other line as it is.
pub fn normalise_line(line: &str) -> String {
    let mut out = String::new();
    let rest = if is_klog(line) {
        let Some((header, rest)) = line.split_once("] ") else {
            return line.to_string();
        };
        let file = header[30..]
            .rsplit_once(':')
            .map_or(&header[30..], |(f, _)| f);
        out.push_str(&format!(
            "{}0000 00:00:00.000000       0 {file}:N] ",
            &line[..1]
        ));
        rest
    } else {
        line
    };
    let mut words = rest.split(' ').peekable();
    while let Some(word) = words.next() {
        match word.split_once("illiseconds=") {
            Some((key, n)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => {
                out.push_str(key);
                out.push_str("illiseconds=N");
            }
            _ => out.push_str(word),
        }
        if words.peek().is_some() {
            out.push(' ');
        }
    }
    out
}

/// [`normalise_line`] of every line of `stderr`.
pub fn normalise(stderr: &str) -> Vec<String> {
    stderr.lines().map(normalise_line).collect()
}

/// The `(verb, url)` of every `"Response"` line that names them (`-v=6`, `-v=9`),
/// in the order logged.
pub fn responses(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|line| {
            let rest = line.split_once("] \"Response\" verb=\"")?.1;
            let (verb, rest) = rest.split_once('"')?;
            let url = rest.strip_prefix(" url=\"")?.split('"').next()?;
            Some((verb.to_string(), url.to_string()))
        })
        .collect()
}

/// The paths (without query) of the `GET` requests a run logged at `-v=6`, sorted.
pub fn logged_get_paths(stderr: &str) -> Vec<String> {
    let mut paths: Vec<String> = responses(stderr)
        .into_iter()
        .filter(|(verb, _)| verb == "GET")
        .filter_map(|(_, url)| {
            let path = url.strip_prefix("https://")?.split_once('/')?.1;
            Some(format!("/{}", path.split('?').next().unwrap_or("")))
        })
        .collect();
    paths.sort();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"I1202 01:36:33.962901   22382 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:6443/api/v1/pods?limit=500" status="200 OK" milliseconds=37"#;

    #[test]
    fn time_pid_line_and_milliseconds_are_normalised() {
        assert_eq!(
            normalise_line(LINE),
            r#"I0000 00:00:00.000000       0 round_trippers.go:N] "Response" verb="GET" url="https://127.0.0.1:6443/api/v1/pods?limit=500" status="200 OK" milliseconds=N"#
        );
        assert_eq!(
            normalise_line(" > milliseconds=92 dnsLookupMilliseconds=0 dialMilliseconds=1"),
            " > milliseconds=N dnsLookupMilliseconds=N dialMilliseconds=N"
        );
        assert_eq!(normalise_line("pod/x created"), "pod/x created");
    }

    #[test]
    fn responses_name_their_requests() {
        let stderr = format!("{LINE}\npod/x created\n");
        assert_eq!(
            responses(&stderr),
            [(
                "GET".to_string(),
                "https://127.0.0.1:6443/api/v1/pods?limit=500".to_string()
            )]
        );
        assert_eq!(logged_get_paths(&stderr), ["/api/v1/pods"]);
    }
}
