//! Why sealing or opening a `requestState` failed.

/// Why a `requestState` could not be sealed or opened, or why a key was refused.
///
/// The variants are precise so that the server can log the reason
/// (`tracing::warn!`); the client only ever sees one fixed message,
/// [`SealError::CLIENT_MESSAGE`], whatever the variant. No variant carries key
/// material or the contents of a state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The token is not shaped like a sealed state (bad separators, bad base64,
    /// too short, an invalid key id, or an authenticated body that does not decode).
    #[error("malformed requestState: {0}")]
    Malformed(&'static str),
    /// The token carries a format version prefix other than `mts3.` (`mts1.` and `mts2.`
    /// tokens of earlier releases included).
    #[error("unsupported requestState format version")]
    Version,
    /// No key with this id is in the keyring.
    #[error("requestState sealed under unknown key id {kid:?}")]
    UnknownKey {
        /// The key id named by the token.
        kid: String,
    },
    /// The key with this id was retired from the keyring.
    #[error("requestState sealed under retired key id {kid:?}")]
    RetiredKey {
        /// The key id named by the token.
        kid: String,
    },
    /// The MAC or AEAD tag does not verify: the token was forged or altered, or it
    /// was issued for another principal, method, tool or set of arguments (those are
    /// bound as associated data), or under another protection mode.
    #[error(
        "requestState signature does not verify (forged, altered, or bound to another principal, method, tool or arguments)"
    )]
    BadSignature,
    /// The state's lifetime is over.
    #[error("requestState expired at {expired_at} (now {now})")]
    Expired {
        /// Unix seconds at which the state stopped being valid.
        expired_at: u64,
        /// Unix seconds according to the sealer's clock.
        now: u64,
    },
    /// The state claims to be issued further in the future than the tolerated clock
    /// skew ([`SealConfig::clock_skew`](super::SealConfig::clock_skew)).
    #[error("requestState issued at {issued_at}, beyond the tolerated clock skew (now {now})")]
    NotYetValid {
        /// Unix seconds at which the state says it was sealed.
        issued_at: u64,
        /// Unix seconds according to the sealer's clock.
        now: u64,
    },
    /// The state claims a lifetime above [`SealConfig::max_ttl`](super::SealConfig::max_ttl).
    #[error("requestState lifetime of {ttl} s exceeds the maximum of {max} s")]
    TtlTooLong {
        /// The lifetime it claims, in seconds.
        ttl: u64,
        /// The configured maximum, in seconds.
        max: u64,
    },
    /// An AEAD [`Protection`](super::Protection) (named here) was configured, but
    /// mcp-tool-runtime was built without its `aead` feature: nothing is sealed or opened
    /// under it.
    #[error("requestState protection {0} needs the `aead` feature of mcp-tool-runtime")]
    AeadUnavailable(&'static str),
    /// The token is (or would be) longer than the configured cap.
    #[error("requestState of {len} bytes exceeds the cap of {max} bytes")]
    Oversize {
        /// Length of the token in bytes.
        len: usize,
        /// The configured cap ([`SealConfig::max_len`](super::SealConfig::max_len)).
        max: usize,
    },
    /// The payload of a state (its JSON text, uncompressed) is longer than the configured
    /// cap: refused on seal, and on open before it is inflated or parsed.
    #[error("requestState payload of {len} bytes exceeds the cap of {max} bytes")]
    PayloadTooLarge {
        /// Length of the payload in bytes (on open: as the token states it).
        len: usize,
        /// The configured cap
        /// ([`SealConfig::max_payload_bytes`](super::SealConfig::max_payload_bytes)).
        max: usize,
    },
    /// The layout fingerprint of a state to seal is longer than a body can hold.
    #[error("layout fingerprint of {len} bytes exceeds the maximum of {max}")]
    LayoutTooLong {
        /// Its length in bytes.
        len: usize,
        /// The most a body holds.
        max: usize,
    },
    /// A key shorter than 32 bytes was offered to the keyring.
    #[error("key {kid:?} is {len} bytes; at least 32 are required")]
    KeyTooShort {
        /// The key id it was offered under.
        kid: String,
        /// Its length in bytes.
        len: usize,
    },
    /// A key id is empty, longer than 64 bytes, or uses characters other than
    /// ASCII letters, digits, `-` and `_`.
    #[error("invalid key id (1 to 64 characters of A-Z a-z 0-9 - _)")]
    InvalidKeyId,
    /// A key id was added to the keyring twice.
    #[error("key id {kid:?} is already in the keyring")]
    DuplicateKeyId {
        /// The repeated key id.
        kid: String,
    },
    /// The active key cannot be retired; make another key active first.
    #[error("key id {kid:?} is the active key and cannot be retired")]
    RetireActive {
        /// The active key id.
        kid: String,
    },
    /// A hex-encoded key is not valid hex (odd length or a non-hex digit).
    #[error("key is not valid hex")]
    InvalidHex,
    /// The operating system's random number generator failed (nonce generation).
    #[error("random number generator failed")]
    Rng,
    /// The cipher refused to encrypt (cannot happen with valid parameters).
    #[error("encryption failed")]
    Encrypt,
}

impl SealError {
    /// The one message every sealing failure shows a client (with JSON-RPC -32602).
    pub const CLIENT_MESSAGE: &'static str = crate::protocol::errors::INVALID_REQUEST_STATE;

    /// Whether this error is about configuration (keys, key ids) rather than a token.
    pub fn is_config_error(&self) -> bool {
        matches!(
            self,
            SealError::KeyTooShort { .. }
                | SealError::InvalidKeyId
                | SealError::DuplicateKeyId { .. }
                | SealError::RetireActive { .. }
                | SealError::InvalidHex
                | SealError::AeadUnavailable(_)
        )
    }
}
