//! How the long-running commands (`serve`, `edge`, `subscribe`, `logs`) learn that they should
//! stop: SIGINT (Ctrl-C) or, on Unix, SIGTERM.

use std::future::Future;

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM: the usual signals to stop a server.
///
/// The handlers are installed when this is called, not when the future is first polled: a
/// server that says it is ready (`wasmod serve` printing its address) and only then starts
/// serving would otherwise be killed, not stopped, by a signal sent at once. Call it within a
/// Tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (interrupt, terminate) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        );
        async move {
            tokio::select! {
                () = received(interrupt, "SIGINT") => tracing::info!("interrupted: shutting down"),
                () = received(terminate, "SIGTERM") => tracing::info!("terminated: shutting down"),
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {error}");
            std::future::pending::<()>().await;
        }
        tracing::info!("interrupted: shutting down");
    }
}

/// Completes when `stream` (the signal `name`'s, installed) receives it; never if it could
/// not be installed.
#[cfg(unix)]
async fn received(stream: std::io::Result<tokio::signal::unix::Signal>, name: &str) {
    match stream {
        Ok(mut stream) => {
            stream.recv().await;
        }
        Err(error) => {
            tracing::error!("cannot listen for {name}: {error}");
            std::future::pending::<()>().await;
        }
    }
}
