//! Ctrl-C and SIGTERM: stop between API calls, never in the middle of one; the
//! interrupt handle of [`super::Context::install_interrupt`].
//!
//! A signal only sets a flag. Each cluster operation checks it before sending a
//! request, and waits race it, so the state left behind is always one a re-run of
//! the same command picks up (rolling-update: from the annotations, the one-name
//! hand-over included).
//!
//! A request in flight is not cut: against a paused or black-holed API server it
//! may take up to the client's timeout. A second signal therefore exits at once,
//! with the same resume hint: every state the cluster can be in is one a re-run
//! finishes.

use std::io::Write as _;

use tokio::sync::watch;

/// The exit code of a run ended by `signal` (128 + its number, as shells report it).
pub fn exit_code(signal: &str) -> u8 {
    if signal == "SIGTERM" { 143 } else { 130 }
}

/// The error that ends an interrupted run; the command turns it into a
/// [`super::Stopped`] with its resume hint.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {signal}")]
pub struct Interrupted {
    pub signal: &'static str,
}

/// A cloneable view of "has the user asked us to stop?".
#[derive(Clone)]
pub struct Interrupt {
    rx: watch::Receiver<Option<&'static str>>,
}

impl Interrupt {
    /// Installs the SIGINT/SIGTERM handlers (must run inside the runtime). `hint`
    /// is printed if a second signal ends the process at once.
    pub fn install(hint: String) -> Self {
        let (tx, rx) = watch::channel(None);
        let mut signals = Signals::new();
        tokio::spawn(async move {
            let signal = signals.next().await;
            let _ = tx.send(Some(signal));
            // Taken: from here a second signal is one of its own, not folded into the
            // first (tokio, as Unix, coalesces a signal that is still pending). At
            // -v=4, so that a test presses twice once the first press was read.
            tracing::debug!(signal, "interrupted: stopping before the next request");
            let again = signals.next().await;
            let _ = writeln!(
                std::io::stderr(),
                "error: interrupted by {again} again: stopping at once\n{hint}"
            );
            std::process::exit(exit_code(again).into());
        });
        Interrupt { rx }
    }

    /// Fails with [`Interrupted`] if a signal arrived.
    pub fn check(&self) -> Result<(), Interrupted> {
        match *self.rx.borrow() {
            Some(signal) => Err(Interrupted { signal }),
            None => Ok(()),
        }
    }

    /// Resolves when a signal arrives.
    pub async fn fired(&self) -> Interrupted {
        let mut rx = self.rx.clone();
        loop {
            if let Some(signal) = *rx.borrow_and_update() {
                return Interrupted { signal };
            }
            if rx.changed().await.is_err() {
                // The handler task is gone; treat as never firing.
                std::future::pending::<()>().await;
            }
        }
    }

    /// Sleeps until `until` unless interrupted first.
    pub async fn sleep_until(&self, until: tokio::time::Instant) -> Result<(), Interrupted> {
        tokio::select! {
            _ = tokio::time::sleep_until(until) => Ok(()),
            i = self.fired() => Err(i),
        }
    }
}

/// SIGINT and SIGTERM, registered once so that no signal between two waits is lost.
struct Signals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                (Ok(int), Ok(term)) => Some((int, term)),
                _ => None,
            };
            Signals { streams }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        if let Some((int, term)) = self.streams.as_mut() {
            return tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn fires_once_sent_and_interrupts_sleeps() {
        let (tx, rx) = watch::channel(None);
        let interrupt = Interrupt { rx };
        assert!(interrupt.check().is_ok());
        let far = tokio::time::Instant::now() + std::time::Duration::from_secs(3600);
        let sleeper = {
            let i = interrupt.clone();
            tokio::spawn(async move { i.sleep_until(far).await })
        };
        tokio::task::yield_now().await;
        tx.send(Some("SIGTERM")).unwrap();
        let err = sleeper.await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), "interrupted by SIGTERM");
        assert!(interrupt.check().is_err());
        assert!(tokio::time::Instant::now() < far);
    }
}
