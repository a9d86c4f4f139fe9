//! What a client proves its identity with on each connection: a token, or a token provider.
//!
//! A token the server signed (`POST /v1/identity`, or the one a connection's first message
//! hands out) is good for the session: the server sends a fresh one on every connection, and
//! reconnections use the latest. A token from elsewhere, an OpenID Provider's ID token above
//! all, expires within minutes and only its issuer makes new ones: the application gives a
//! **token provider**, a function that gets one (a refresh, a new sign-in), and the client
//! asks it for the first connection and again whenever a server refuses the one it has as
//! expired (`token_expired`, HTTP 401 on the upgrade), then connects with the new one at once.
//! Between those it keeps the provider's last token, so a reconnection within its lifetime
//! asks the provider for nothing.

use crate::error::Error;
use crate::platform;
use crate::servers::{self, Servers};
use crate::socket::{self, OpenError};
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use wasmod_protocol::errors::ErrorCode;

/// How long the client waits for a token provider's token before it gives the attempt up.
/// Long, since a provider may sign a user in again, but bounded: while it waits, a client
/// that is reconnecting handles nothing else.
pub(crate) const TOKEN_TIMEOUT: Duration = Duration::from_secs(60);

/// A token provider's answer, as the client keeps the provider.
type TokenFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// How a client connects: as whom, each time.
pub(crate) enum Credentials {
    /// With this token (none at first: a new identity), which each connection replaces with
    /// the fresh one the server sent.
    Session(Option<String>),
    /// With the token provider's token.
    Provider(TokenProvider),
}

impl Credentials {
    /// Opens a connection to the first of `servers` that takes it (one round, as
    /// [`servers::open_round`]) with these credentials.
    pub(crate) async fn open(
        &mut self,
        servers: &mut Servers,
        tls: &platform::Tls,
    ) -> Result<socket::Connection, Error> {
        match self {
            Self::Session(token) => {
                let socket = servers::open_round(servers, token.as_deref(), tls).await?;
                *token = Some(socket.session().token.clone());
                Ok(socket)
            }
            Self::Provider(provider) => provider.open(servers, tls).await,
        }
    }
}

/// The application's token provider, and the last token it gave.
pub(crate) struct TokenProvider {
    provide: Box<dyn FnMut() -> TokenFuture + Send>,
    current: Option<String>,
}

impl TokenProvider {
    /// Keeps `provide`, whose errors become their text.
    pub(crate) fn new<F, Fut, E>(mut provide: F) -> Self
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = Result<String, E>> + Send + 'static,
        E: Display,
    {
        Self {
            provide: Box::new(move || {
                let token = provide();
                Box::pin(async move { token.await.map_err(|error| error.to_string()) })
            }),
            current: None,
        }
    }

    /// Opens a connection with the last token (asking the provider for one if there is none),
    /// and, when the servers refuse it as expired, asks for a new one and opens with that.
    async fn open(
        &mut self,
        servers: &mut Servers,
        tls: &platform::Tls,
    ) -> Result<socket::Connection, Error> {
        let token = match &self.current {
            Some(token) => token.clone(),
            None => self.fetch().await?,
        };
        match servers::open_round(servers, Some(&token), tls).await {
            Err(refused) if expired(&refused) => {
                tracing::info!("the token has expired: asking the token provider for a new one");
                let token = self.fetch().await?;
                Ok(servers::open_round(servers, Some(&token), tls).await?)
            }
            opened => Ok(opened?),
        }
    }

    /// A new token from the provider, kept as the last one.
    async fn fetch(&mut self) -> Result<String, Error> {
        self.current = None;
        let token = platform::timeout(TOKEN_TIMEOUT, (self.provide)())
            .await
            .ok_or_else(|| {
                Error::TokenProvider(format!("no token within {} s", TOKEN_TIMEOUT.as_secs()))
            })?
            .map_err(Error::TokenProvider)?;
        self.current = Some(token.clone());
        Ok(token)
    }
}

/// Whether `error` is a server's refusal of an expired token.
fn expired(error: &OpenError) -> bool {
    matches!(
        error,
        OpenError::Refused {
            error: Some(error),
            ..
        } if error.code == ErrorCode::TokenExpired
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use wasmod_protocol::errors::ApiError;

    fn refused(code: ErrorCode) -> OpenError {
        OpenError::Refused {
            status: 401,
            error: Some(ApiError::new(code, "the token")),
            reason: code.to_string(),
        }
    }

    #[test]
    fn only_an_expired_token_is_asked_for_again() {
        assert!(expired(&refused(ErrorCode::TokenExpired)));
        assert!(!expired(&refused(ErrorCode::InvalidToken)));
        assert!(!expired(&OpenError::Refused {
            status: 401,
            error: None,
            reason: "token_expired".into(),
        }));
        assert!(!expired(&OpenError::Failed("refused".into())));
    }

    #[tokio::test]
    async fn each_fetch_asks_the_provider_and_keeps_its_token_or_its_error() {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = calls.clone();
        let mut provider = TokenProvider::new(move || {
            let call = counted.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                match call {
                    1 => Ok(format!("token {call}")),
                    _ => Err(format!("signed out after call {}", call - 1)),
                }
            }
        });
        assert_eq!(provider.fetch().await, Ok("token 1".to_owned()));
        assert_eq!(provider.current.as_deref(), Some("token 1"));
        let error = provider.fetch().await.unwrap_err();
        assert_eq!(
            error,
            Error::TokenProvider("signed out after call 1".to_owned())
        );
        assert_eq!(
            error.to_string(),
            "the token provider gave no token: signed out after call 1"
        );
        assert_eq!(provider.current, None, "a failed fetch keeps no token");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
