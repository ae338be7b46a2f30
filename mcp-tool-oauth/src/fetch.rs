//! Talking to the authorization server: JSON documents fetched or posted for, each exchange
//! within a time limit and a size cap, no redirects followed, nothing of the answer trusted
//! beyond "a JSON object".

use std::time::Duration;

use reqwest::{Client, RequestBuilder, Url};
use serde_json::{Map, Value};

/// Why a document could not be had (logged at debug level; never sent to a client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FetchError {
    /// The exchange took longer than the timeout.
    #[error("timed out")]
    Timeout,
    /// The document is larger than the cap.
    #[error("document too large")]
    TooLarge,
    /// A status other than 200.
    #[error("HTTP status {0}")]
    Status(u16),
    /// Connection or protocol failure.
    #[error("connection failed")]
    Transport,
    /// Not a JSON object.
    #[error("not a JSON object")]
    NotJson,
}

/// An HTTP client for the authorization server's documents.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    client: Client,
    timeout: Duration,
    max_bytes: usize,
}

impl Fetcher {
    /// A client with rustls, no redirects, `timeout` per exchange, documents of at most
    /// `max_bytes`.
    pub(crate) fn new(timeout: Duration, max_bytes: usize) -> Option<Self> {
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .timeout(timeout)
            .user_agent(concat!(
                env!("CARGO_PKG_NAME"),
                "/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .ok()?;
        Some(Self {
            client,
            timeout,
            max_bytes,
        })
    }

    /// GETs the JSON object at `url`.
    pub(crate) async fn get(&self, url: &Url) -> Result<Map<String, Value>, FetchError> {
        self.exchange(self.client.get(url.clone())).await
    }

    /// POSTs `form` to `url` with HTTP Basic authentication; the JSON object answered.
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, &str)],
        user: &str,
        password: &str,
    ) -> Result<Map<String, Value>, FetchError> {
        let request = self
            .client
            .post(url.clone())
            .basic_auth(user, Some(password))
            .form(form);
        self.exchange(request).await
    }

    async fn exchange(&self, request: RequestBuilder) -> Result<Map<String, Value>, FetchError> {
        let request = request.header(reqwest::header::ACCEPT, "application/json");
        // The client's timeout covers the whole exchange too; this one also bounds a
        // server that trickles its body.
        match tokio::time::timeout(self.timeout, self.read(request)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout),
        }
    }

    async fn read(&self, request: RequestBuilder) -> Result<Map<String, Value>, FetchError> {
        let mut response = request.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(FetchError::Status(status));
        }
        if response
            .content_length()
            .is_some_and(|n| n > self.max_bytes as u64)
        {
            return Err(FetchError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if body.len().saturating_add(chunk.len()) > self.max_bytes {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice(&body) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(FetchError::NotJson),
        }
    }
}

fn classify(e: reqwest::Error) -> FetchError {
    if e.is_timeout() {
        FetchError::Timeout
    } else {
        FetchError::Transport
    }
}
