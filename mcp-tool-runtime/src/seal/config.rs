//! How states are protected and for how long: [`Protection`] and [`SealConfig`].

use std::time::Duration;

/// How a state is protected.
///
/// The two AEAD protections need the `aead` feature (on by default). Without it the
/// variants stay (a configuration names them the same with or without the feature), but
/// sealing or opening under them fails with [`SealError::AeadUnavailable`](super::SealError::AeadUnavailable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Protection {
    /// HMAC-SHA256: integrity only; the payload is readable (base64) by the client.
    #[default]
    Hmac,
    /// AES-256-GCM under a per-token key (derived from a random 128-bit salt) with a
    /// random 96-bit nonce: integrity and confidentiality, safe for a fleet sharing a key.
    Aes256Gcm,
    /// ChaCha20-Poly1305 under a per-token key (derived from a random 128-bit salt) with
    /// a random 96-bit nonce: integrity and confidentiality, safe for a fleet sharing a key.
    ChaCha20Poly1305,
}

impl Protection {
    /// A stable name, bound into every tag (so a token sealed under one mode never
    /// opens under another) and used to derive the mode's subkey.
    pub fn name(self) -> &'static str {
        match self {
            Protection::Hmac => "hmac-sha256",
            Protection::Aes256Gcm => "aes-256-gcm",
            Protection::ChaCha20Poly1305 => "chacha20-poly1305",
        }
    }

    /// Whether the payload is encrypted.
    pub fn is_aead(self) -> bool {
        !matches!(self, Protection::Hmac)
    }
}

/// Settings of a [`Sealer`](super::Sealer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealConfig {
    /// How long a state stays valid unless the seal call overrides it (whole
    /// seconds, rounded up). Default: 10 minutes.
    pub ttl: Duration,
    /// The longest lifetime a state may have: a longer TTL asked at seal time is cut to
    /// it, and a token claiming a longer one is refused on open. Default: 1 hour.
    pub max_ttl: Duration,
    /// How far apart the clocks of the replicas may be: a token issued more than this in
    /// the opener's future is refused. Default: 60 seconds.
    pub clock_skew: Duration,
    /// Longest token, in bytes, that is sealed or opened. Default: 65536.
    pub max_len: usize,
    /// Longest payload (the state's JSON text, uncompressed), in bytes, that is sealed or
    /// opened: sealing a longer one fails ([`SealError::PayloadTooLarge`], -32603 for a
    /// round), and a token whose payload is (or inflates to) more is refused before it is
    /// inflated or parsed. The one bound on what opening a state costs, compressed or not
    /// (parsing JSON text costs at most about 83 times its length). Default: 262144
    /// ([`SealConfig::DEFAULT_MAX_PAYLOAD_BYTES`]).
    ///
    /// [`SealError::PayloadTooLarge`]: super::SealError::PayloadTooLarge
    pub max_payload_bytes: usize,
    /// Signing or encryption. Default: [`Protection::Hmac`].
    pub protection: Protection,
    /// The deployment this sealer works for, bound into every tag, so that two services
    /// sharing a key (and a tool name) do not accept each other's states. `None` (the
    /// default) lets [`ServerBuilder::build`](crate::server::ServerBuilder::build) set it
    /// to the server's name; a sealer used alone binds the empty context.
    pub context: Option<String>,
    /// Compress the payload (LZ4) before sealing when that makes it shorter. Applies only to
    /// [`Protection::Hmac`], whose states the client can read anyway: under AEAD the length
    /// of a compressed state would leak how much of the client's own answers matches the
    /// confidential data next to them (a compression oracle), so AEAD states are never
    /// compressed whatever this says. Opening accepts compressed and plain payloads alike.
    /// Default: `true`.
    pub compress: bool,
}

impl SealConfig {
    /// Default lifetime of a state: 10 minutes.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
    /// Default cap on a state's lifetime: 1 hour.
    pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(3600);
    /// Default tolerated clock skew between replicas: 60 seconds.
    pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_secs(60);
    /// Default cap on a token's length: 64 KiB.
    pub const DEFAULT_MAX_LEN: usize = 64 * 1024;
    /// Default cap on a state's payload, uncompressed: 256 KiB. Why: a round's answers are
    /// capped at 256 KiB together (`max_answers_total_bytes`), and a state that keeps more
    /// than that would not fit in a 64 KiB token unless it compresses more than 4 to 1;
    /// opening one costs at most about 21 MiB of parsing.
    pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 256 * 1024;

    /// This config with another default TTL.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// This config with another maximum TTL.
    pub fn with_max_ttl(mut self, max_ttl: Duration) -> Self {
        self.max_ttl = max_ttl;
        self
    }

    /// This config with another tolerated clock skew.
    pub fn with_clock_skew(mut self, skew: Duration) -> Self {
        self.clock_skew = skew;
        self
    }

    /// This config with another length cap.
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// This config with another cap on the uncompressed payload (see
    /// [`SealConfig::max_payload_bytes`]).
    pub fn with_max_payload_bytes(mut self, max: usize) -> Self {
        self.max_payload_bytes = max;
        self
    }

    /// This config with compression of HMAC-protected payloads on or off (see
    /// [`SealConfig::compress`]).
    pub fn with_compress(mut self, compress: bool) -> Self {
        self.compress = compress;
        self
    }

    /// This config with another protection mode.
    pub fn with_protection(mut self, protection: Protection) -> Self {
        self.protection = protection;
        self
    }

    /// This config bound to the deployment `context` (see [`SealConfig::context`]).
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }
}

impl Default for SealConfig {
    fn default() -> Self {
        SealConfig {
            ttl: Self::DEFAULT_TTL,
            max_ttl: Self::DEFAULT_MAX_TTL,
            clock_skew: Self::DEFAULT_CLOCK_SKEW,
            max_len: Self::DEFAULT_MAX_LEN,
            max_payload_bytes: Self::DEFAULT_MAX_PAYLOAD_BYTES,
            protection: Protection::Hmac,
            context: None,
            compress: true,
        }
    }
}
