//! `-v`: the verbosity of [`apiclient::klog`] (what kubectl logs, such as each
//! request from `-v=6`), and the workspace's own tracing events written as klog
//! lines (`I1202 01:36:33.962901   22382 builder.rs:120] message key=value`), never
//! coloured, as klog's never are.
//!
//! The libraries under the plugins (hyper, h2, rustls, kube) log their internals
//! through tracing too (`send frame=Settings {…}`, `pooling idle connection`); kubectl
//! shows nothing of its transport at any level, so they stay off unless
//! `KUBEPLUG_LOG` asks for them: `KUBEPLUG_LOG=h2=trace,hyper_util=debug`, in
//! tracing's `target=level` form (a release build has no `trace!` events at all:
//! tracing's `release_max_level_debug`, for binary size; see `Cargo.toml`).

use apiclient::klog::{self, Severity};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, format};
use tracing_subscriber::registry::LookupSpan;

/// The environment variable naming more tracing targets to show.
const ENV: &str = "KUBEPLUG_LOG";

/// Sets `-v` for klog's lines and starts the tracing subscriber: the workspace's
/// libraries ([`LIBRARIES`]) and the plugin (`crate_name`, its tracing target) from
/// `-v=4`, warnings at any level, and whatever `KUBEPLUG_LOG` adds.
pub fn init_logging(verbosity: u8, crate_name: &str) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    klog::set_verbosity(verbosity);
    let extra = std::env::var(ENV).unwrap_or_default();
    // `Targets`, not `EnvFilter`: the filter is a fixed `target=level` list, which
    // `Targets` matches the same way (longest target prefix wins, a bare level is the
    // default); `EnvFilter` (the `env-filter` feature) would bring its directive
    // parser and span-field value matching for nothing (binary size). A
    // `KUBEPLUG_LOG` that does not parse leaves the levels' own list.
    let filter: tracing_subscriber::filter::Targets = logging_filter(verbosity, crate_name, &extra)
        .parse()
        .or_else(|_| logging_filter(verbosity, crate_name, "").parse())
        .unwrap_or_default();
    // A registry with the fmt layer, not `fmt()`'s subscriber: that one has a level
    // filter of its own (INFO) that would hide the debug and trace levels of `-v=4`+.
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(std::io::stderr)
                .event_format(Klog),
        )
        .with(filter)
        .try_init();
}

/// The tracing filter of [`init_logging`]: `extra` (`KUBEPLUG_LOG`) last.
fn logging_filter(verbosity: u8, crate_name: &str, extra: &str) -> String {
    // kube-client logs every failed request at ERROR before returning the error we
    // print ourselves, and kube-runtime's watcher every retried watch error with a
    // Debug dump of the Status; kubectl shows nothing of the kind at any level.
    let quiet = "warn,kube_client=off,kube_runtime=off";
    let mut filter = match verbosity {
        0..=3 => quiet.to_string(),
        4..=7 => format!("{quiet},{},{crate_name}=debug", libraries("debug")),
        _ => format!("{quiet},{},{crate_name}=trace", libraries("trace")),
    };
    if !extra.trim().is_empty() {
        filter.push(',');
        filter.push_str(extra.trim());
    }
    filter
}

/// The workspace's library crates, whose logs `-v=4` and up show (their tracing
/// targets are their module paths).
const LIBRARIES: [&str; 5] = ["gotext", "goyaml", "apiclient", "resources", "cli"];

/// `gotext=LEVEL,goyaml=LEVEL,…` for [`LIBRARIES`].
fn libraries(level: &str) -> String {
    LIBRARIES.map(|l| format!("{l}={level}")).join(",")
}

/// A tracing event as a klog line: klog's header with the event's file and line,
/// then its message and fields.
struct Klog;

impl<S, N> FormatEvent<S, N> for Klog
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let severity = match *meta.level() {
            tracing::Level::ERROR => Severity::Error,
            tracing::Level::WARN => Severity::Warning,
            _ => Severity::Info,
        };
        let file = meta
            .file()
            .map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f))
            .unwrap_or("???");
        write!(
            writer,
            "{}",
            klog::header(severity, file, meta.line().unwrap_or(0))
        )?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;
    use tracing_subscriber::filter::Targets;

    fn at(v: u8, extra: &str) -> Targets {
        logging_filter(v, "kubectl_x", extra)
            .parse()
            .expect("parses")
    }

    #[test]
    fn logging_names_only_the_given_crate() {
        assert_eq!(
            logging_filter(4, "kubectl_x", ""),
            "warn,kube_client=off,kube_runtime=off,gotext=debug,goyaml=debug,apiclient=debug,resources=debug,cli=debug,kubectl_x=debug"
        );
        assert!(!logging_filter(6, "kubectl_x", "").contains("run_pod"));
    }

    /// Every level's list parses as `Targets` and selects by target prefix: the
    /// workspace's crates from 4, kube's own request errors never (we print them).
    #[test]
    fn the_workspace_logs_from_v4() {
        assert!(!at(0, "").would_enable("kube_client::client", &Level::ERROR));
        assert!(at(0, "").would_enable("rustls", &Level::WARN));
        assert!(!at(0, "").would_enable("resources", &Level::INFO));
        assert!(at(4, "").would_enable("kubectl_x::options", &Level::DEBUG));
        for library in LIBRARIES {
            assert!(at(4, "").would_enable(&format!("{library}::x"), &Level::DEBUG));
        }
        assert!(at(9, "").would_enable("resources::builder", &Level::TRACE));
    }

    /// No level shows the transport's internals; `KUBEPLUG_LOG` does.
    #[test]
    fn transport_internals_only_through_the_environment() {
        for v in [6, 8, 9, 10] {
            for target in [
                "h2::codec",
                "hyper_util::client",
                "rustls::client",
                "kube_client",
            ] {
                assert!(
                    !at(v, "").would_enable(target, &Level::DEBUG),
                    "{v} {target}"
                );
            }
        }
        let asked = at(0, "h2=trace,hyper_util=debug");
        assert!(asked.would_enable("h2::codec", &Level::TRACE));
        assert!(asked.would_enable("hyper_util::client", &Level::DEBUG));
        assert!(!asked.would_enable("rustls", &Level::DEBUG));
    }

    /// A tracing event reads as a klog line, without colour.
    #[test]
    fn events_are_klog_lines() {
        use tracing_subscriber::layer::SubscriberExt as _;
        #[derive(Clone, Default)]
        struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Sink {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().expect("lock").extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .event_format(Klog),
        );
        let line = line!() + 2;
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(document = 2, "skipping");
        });
        let text = String::from_utf8(sink.0.lock().expect("lock").clone()).expect("utf-8");
        assert!(text.starts_with('W'), "{text}");
        assert!(
            text.ends_with(&format!(" logging.rs:{line}] skipping document=2\n")),
            "{text}"
        );
        assert!(!text.contains('\x1b'), "{text}");
    }
}
