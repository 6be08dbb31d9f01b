//! Ctrl-C and SIGTERM: stop between API calls, never in the middle of one.
//!
//! A signal only sets a flag. Each cluster operation checks it before sending a
//! request, and waits race it, so the state left behind is always one a re-run of
//! the same command (or `--rollback`) picks up from the annotations. The one step
//! that runs to its end regardless is the rename's orphan-delete → re-create
//! (`cluster::rename`): between the two, nothing on the cluster records the update.

use tokio::sync::watch;

/// The error that ends an interrupted run; `main` turns it into the resume hint.
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
    /// Installs the SIGINT/SIGTERM handlers (must run inside the runtime).
    pub fn install() -> Self {
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let signal = wait_for_signal().await;
            let _ = tx.send(Some(signal));
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

#[cfg(unix)]
async fn wait_for_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut int), Ok(mut term)) => tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        },
        _ => {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "SIGINT"
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
