//! Signing keys with key ids, for rotation.

use std::collections::BTreeSet;
use std::fmt;

use zeroize::Zeroizing;

use super::config::Protection;
use super::envelope::{HmacSha256, hmac_head, subkey};
use super::error::SealError;

/// Minimum key length in bytes.
pub const MIN_KEY_LEN: usize = 32;

/// Longest key id accepted.
pub const MAX_KID_LEN: usize = 64;

/// One key: its id and its bytes, zeroized on drop.
pub(crate) struct Key {
    pub(crate) kid: String,
    /// The subkey of each protection mode, derived once when the key enters the ring
    /// (not on every seal and open), zeroized on drop. The key itself is not kept: it is
    /// zeroized as soon as they are derived.
    subkeys: [Zeroizing<[u8; 32]>; 3],
    /// HMAC keyed with the HMAC subkey, the constant head of the associated data absorbed
    /// ([`hmac_head`]). Like the subkey it lets its holder make tags; unlike the subkey it
    /// is not zeroized on drop (the `hmac` crate's state offers no zeroizing).
    hmac: HmacSha256,
}

impl Key {
    /// The pre-keyed HMAC of this key (see [`hmac_head`]).
    pub(crate) fn hmac(&self) -> &HmacSha256 {
        &self.hmac
    }

    /// The subkey `protection` seals and opens with.
    pub(crate) fn mode_key(&self, protection: Protection) -> &[u8] {
        let i = match protection {
            Protection::Hmac => 0,
            Protection::Aes256Gcm => 1,
            Protection::ChaCha20Poly1305 => 2,
        };
        &self.subkeys[i][..]
    }
}

/// The keys a [`Sealer`](super::Sealer) seals and opens with.
///
/// The *active* key seals every new state. *Previous* keys still open states they
/// sealed, until they are *retired*; a state naming a retired key fails with
/// [`SealError::RetiredKey`], one naming a key the ring never knew with
/// [`SealError::UnknownKey`]. Keys must be at least 32 bytes and are zeroized when
/// the ring is dropped; `Debug` shows key ids only.
///
/// Rotation, across deployments: `Keyring::new("k2", new)?.add_previous("k1", old)?`
/// while states sealed under `k1` may still be in flight (at least the TTL), then
/// `Keyring::new("k2", new)?.retire("k1")?`.
pub struct Keyring {
    active: Key,
    previous: Vec<Key>,
    retired: BTreeSet<String>,
}

/// Whether `kid` is a usable key id: 1 to 64 ASCII letters, digits, `-` or `_`
/// (the token uses `.` as a separator).
pub fn valid_kid(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= MAX_KID_LEN
        && kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn make_key(kid: String, secret: Vec<u8>) -> Result<Key, SealError> {
    // Wrap first so that a refused key is zeroized too.
    let secret = Zeroizing::new(secret);
    if !valid_kid(&kid) {
        return Err(SealError::InvalidKeyId);
    }
    if secret.len() < MIN_KEY_LEN {
        return Err(SealError::KeyTooShort {
            kid,
            len: secret.len(),
        });
    }
    let subkeys = [
        subkey(&secret, Protection::Hmac)?,
        subkey(&secret, Protection::Aes256Gcm)?,
        subkey(&secret, Protection::ChaCha20Poly1305)?,
    ];
    let hmac = hmac_head(&subkeys[0][..], &kid)?;
    Ok(Key { kid, subkeys, hmac })
}

/// Decode hex (upper or lower case; surrounding whitespace ignored) into a
/// zeroizing buffer.
fn decode_hex(hex: &str) -> Result<Zeroizing<Vec<u8>>, SealError> {
    let hex = hex.trim().as_bytes();
    if !hex.len().is_multiple_of(2) {
        return Err(SealError::InvalidHex);
    }
    let mut out = Zeroizing::new(vec![0u8; hex.len() / 2]);
    hex::decode_to_slice(hex, &mut out[..]).map_err(|_| SealError::InvalidHex)?;
    Ok(out)
}

impl Keyring {
    /// A keyring whose active key is `key` under id `kid`.
    ///
    /// Fails with [`SealError::KeyTooShort`] for keys under 32 bytes and
    /// [`SealError::InvalidKeyId`] for ids that are empty, longer than 64 bytes or
    /// contain characters other than `A-Z a-z 0-9 - _`. Pass the key by value (a
    /// `Vec<u8>`) so that no copy outlives the ring.
    pub fn new(kid: impl Into<String>, key: impl Into<Vec<u8>>) -> Result<Self, SealError> {
        Ok(Keyring {
            active: make_key(kid.into(), key.into())?,
            previous: Vec::new(),
            retired: BTreeSet::new(),
        })
    }

    /// A keyring whose active key is given in hex, as from an environment variable
    /// (`Keyring::from_hex("k1", &std::env::var("STATE_KEY")?)`).
    pub fn from_hex(kid: impl Into<String>, hex: &str) -> Result<Self, SealError> {
        let bytes = decode_hex(hex)?;
        Keyring::new(kid, bytes.to_vec())
    }

    /// A keyring with a fresh random 32-byte active key from the operating system.
    ///
    /// States sealed with it open only in this process: replicas will not
    /// understand each other's states.
    pub fn random(kid: impl Into<String>) -> Result<Self, SealError> {
        let mut key = Zeroizing::new(vec![0u8; MIN_KEY_LEN]);
        getrandom::getrandom(&mut key).map_err(|_| SealError::Rng)?;
        Keyring::new(kid, key.to_vec())
    }

    /// Add a previous key: it no longer seals, but still opens the states it sealed.
    ///
    /// Fails on a short key, an invalid id, or an id already in the ring (active,
    /// previous or retired).
    pub fn add_previous(
        mut self,
        kid: impl Into<String>,
        key: impl Into<Vec<u8>>,
    ) -> Result<Self, SealError> {
        let key = make_key(kid.into(), key.into())?;
        if self.knows(&key.kid) {
            return Err(SealError::DuplicateKeyId {
                kid: key.kid.clone(),
            });
        }
        self.previous.push(key);
        Ok(self)
    }

    /// [`add_previous`](Self::add_previous) with the key in hex.
    pub fn add_previous_hex(self, kid: impl Into<String>, hex: &str) -> Result<Self, SealError> {
        let bytes = decode_hex(hex)?;
        self.add_previous(kid, bytes.to_vec())
    }

    /// Retire a key id: states sealed under it stop opening
    /// ([`SealError::RetiredKey`]). The key bytes, if the ring holds them, are
    /// dropped (and zeroized). Retiring an id the ring never held just records it.
    /// The active key cannot be retired ([`SealError::RetireActive`]).
    pub fn retire(mut self, kid: &str) -> Result<Self, SealError> {
        if kid == self.active.kid {
            return Err(SealError::RetireActive {
                kid: kid.to_owned(),
            });
        }
        if !valid_kid(kid) {
            return Err(SealError::InvalidKeyId);
        }
        self.previous.retain(|k| k.kid != kid);
        self.retired.insert(kid.to_owned());
        Ok(self)
    }

    /// The id of the key that seals new states.
    pub fn active_kid(&self) -> &str {
        &self.active.kid
    }

    /// The ids of the keys that open states: the active key first, then the
    /// previous keys in the order they were added.
    pub fn kids(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.active.kid.as_str())
            .chain(self.previous.iter().map(|k| k.kid.as_str()))
    }

    /// Whether `kid` was retired.
    pub fn is_retired(&self, kid: &str) -> bool {
        self.retired.contains(kid)
    }

    fn knows(&self, kid: &str) -> bool {
        self.active.kid == kid
            || self.previous.iter().any(|k| k.kid == kid)
            || self.retired.contains(kid)
    }

    pub(crate) fn active(&self) -> &Key {
        &self.active
    }

    /// The key that opens states naming `kid`.
    pub(crate) fn lookup(&self, kid: &str) -> Result<&Key, SealError> {
        if self.active.kid == kid {
            return Ok(&self.active);
        }
        if let Some(k) = self.previous.iter().find(|k| k.kid == kid) {
            return Ok(k);
        }
        if self.retired.contains(kid) {
            return Err(SealError::RetiredKey {
                kid: kid.to_owned(),
            });
        }
        Err(SealError::UnknownKey {
            kid: kid.to_owned(),
        })
    }
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("active", &self.active.kid)
            .field(
                "previous",
                &self
                    .previous
                    .iter()
                    .map(|k| k.kid.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("retired", &self.retired)
            .finish_non_exhaustive()
    }
}
