//! The byte layout of a sealed state and the cryptography around it.
//!
//! Token: `mts3.<kid>.<base64url without padding>`, then for a call whose first round was
//! sampled by OpenTelemetry `.<trace>`: the call's trace context, [`TRACE_LEN`] base64url
//! characters (see `crate::telemetry::CallTrace`), outside the protected bytes so that a
//! replica reads it before the server span of the request starts (it is the span's remote
//! parent), and bound by the tag as the last field of the associated data. The base64 part is
//! - HMAC-SHA256: `body || tag[16]`, tag = the first 16 bytes of HMAC(k_hmac, AD || lp(body))
//!   (a 128-bit tag, the truncation RFC 2104 §5 and NIST SP 800-107 allow: forging one takes
//!   about 2¹²⁸ tries, each an online request);
//! - AEAD: `salt[16] || nonce[12] || ciphertext(body) || tag[16]` with AD as associated
//!   data, under a key of its own for every token: HMAC-SHA256(k_mode, `TOKEN_KEY_LABEL
//!   || 0x00 || salt`), salt and nonce fresh from the operating system's generator.
//!
//! Why a key per token: a fleet shares one key and may seal billions of states; random
//! 96-bit nonces under one AES-GCM or ChaCha20-Poly1305 key collide (with a catastrophic
//! loss of integrity) with probability about n²/2⁹⁷ after n tokens. With a 128-bit salt
//! choosing the key, a nonce is reused only when salt and nonce both repeat: about n²/2²²⁵.
//!
//! AD (never stored) is the length-prefixed concatenation of: the domain label, the
//! version, the protection name, the kid, the deployment context
//! ([`SealConfig::context`](super::SealConfig::context)), the principal's kind
//! (`anonymous` or `named`), the principal id, the method, the tool name and the argument
//! digest, and the trace segment when the token has one. Every field carries an 8-byte
//! big-endian length so no two different field lists share an encoding (a token without a
//! trace segment has the associated data of one sealed before the segment existed).
//!
//! Body: `issued_at u32 BE || expires_at u32 BE || round (LEB128, 1 to 5 bytes) ||
//! layout_len u8 || layout || payload` (Unix seconds as u32 last until 2106; a layout is a
//! short fingerprint, at most 255 bytes),
//! where the payload is either its JSON text (which starts with `{`, `[`, `"`, a digit, a
//! letter or white space) or `0x00 || len u32 LE || LZ4 block(JSON text)`
//! ([`COMPRESSED_PAYLOAD`]): the sealer compresses only under HMAC protection, and only when
//! that is shorter (see [`SealConfig::compress`](super::SealConfig::compress) and
//! docs/SECURITY.md). Opening accepts both; either is at most
//! [`SealConfig::max_payload_bytes`](super::SealConfig::max_payload_bytes) long
//! uncompressed, checked on seal and, before inflating, on open.
//!
//! Why LZ4 and not deflate: deflate (miniz_oxide) zeroes ~250 KB of tables on every call,
//! about 16 µs even for a 300-byte state (45 % of a round's instructions under callgrind);
//! LZ4 compresses a small state in about 1 µs and 17 KB in tens of µs, at a ratio of about
//! 0.6 on JSON text where deflate reaches about 0.4.
//!
//! The keyring's keys are never used directly: each protection gets its own
//! subkey, HMAC-SHA256(key, `SUBKEY_LABEL || 0x00 || protection name`).
//!
//! Version history, none of them opened any more (such a token fails with
//! [`SealError::Version`](super::SealError::Version), which the client sees as the one
//! `invalid requestState` error, and a client starts the call again):
//! - `mts1`: no deployment context, no issue time, AEAD under the mode subkey with a random
//!   96-bit nonce;
//! - `mts2`: 64-bit times, a 32-bit round and layout length, a 32-byte HMAC tag (80 bytes of
//!   fixed overhead where `mts3` has 27 to 31).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use super::binding::Binding;
use super::config::Protection;
use super::error::SealError;

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// Format version prefix of every token (including the dot).
pub const PREFIX: &str = "mts3.";
/// The version string bound into the MAC.
const VERSION: &[u8] = b"mts3";
/// Domain-separation label bound into every MAC/AEAD tag.
pub const DOMAIN_LABEL: &str = "io.modelcontextprotocol/requestState mcp-tool-runtime";
/// Label for deriving per-protection subkeys.
const SUBKEY_LABEL: &[u8] = b"mcp-tool-runtime seal subkey v1";
/// Label for deriving the key of one AEAD token from its salt.
#[cfg(feature = "aead")]
const TOKEN_KEY_LABEL: &[u8] = b"mcp-tool-runtime seal token key v2";

/// Length of a token's trace segment: base64url (no padding) of a 16-byte trace id and an
/// 8-byte span id.
pub(crate) const TRACE_LEN: usize = 32;

/// Whether `s` has the shape of a trace segment (its ids are `crate::telemetry`'s to read).
pub(crate) fn valid_trace(s: &str) -> bool {
    s.len() == TRACE_LEN
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// HMAC tag length: SHA-256's 32 bytes truncated to their first 16.
pub(crate) const HMAC_TAG_LEN: usize = 16;
/// AEAD nonce length (both ciphers).
pub(crate) const NONCE_LEN: usize = 12;
/// Length of the random salt that picks an AEAD token's key.
pub(crate) const SALT_LEN: usize = 16;
/// AEAD tag length (both ciphers).
pub(crate) const AEAD_TAG_LEN: usize = 16;
/// Smallest fixed part of the body: issue time, expiry, a one-byte round, layout length.
const BODY_FIXED: usize = 4 + 4 + 1 + 1;
/// Longest layout fingerprint a body holds.
pub(crate) const MAX_LAYOUT_LEN: usize = u8::MAX as usize;
/// First byte of a compressed payload (never the first byte of JSON text).
pub(crate) const COMPRESSED_PAYLOAD: u8 = 0;
/// Payloads shorter than this are never compressed (LZ4 cannot win much on them).
const COMPRESS_MIN: usize = 64;

fn lp(out: &mut Vec<u8>, field: &[u8]) {
    out.extend_from_slice(&(field.len() as u64).to_be_bytes());
    out.extend_from_slice(field);
}

/// The associated data's first four fields, the same for every token of a key: the domain
/// label, the version, the protection name and the kid.
fn head_fields(protection: Protection, kid: &str) -> [&[u8]; 4] {
    [
        DOMAIN_LABEL.as_bytes(),
        VERSION,
        protection.name().as_bytes(),
        kid.as_bytes(),
    ]
}

/// The associated data's other fields, each handed to `field`: the deployment context, the
/// principal's kind and [`key`](crate::principal::Principal::key) (`""` for the anonymous
/// principal, which the kind tells apart from a named `""`), the method, the tool name, the
/// argument digest, and the trace segment when there is one.
fn binding_fields(
    context: &str,
    b: &Binding<'_>,
    trace: Option<&str>,
    mut field: impl FnMut(&[u8]),
) {
    let principal = b.principal.key().unwrap_or_default();
    let kind: &[u8] = if b.principal.is_anonymous() {
        b"anonymous"
    } else {
        b"named"
    };
    for f in [
        context.as_bytes(),
        kind,
        principal.as_bytes(),
        b.method.as_bytes(),
        b.tool.as_bytes(),
        &b.args_digest,
    ] {
        field(f);
    }
    if let Some(trace) = trace {
        field(trace.as_bytes());
    }
}

/// The associated data: bound by the tag, never stored in the token.
pub(crate) fn associated_data(
    protection: Protection,
    kid: &str,
    context: &str,
    b: &Binding<'_>,
    trace: Option<&str>,
) -> Vec<u8> {
    let mut ad =
        Vec::with_capacity(256 + kid.len() + context.len() + b.method.len() + b.tool.len());
    for field in head_fields(protection, kid) {
        lp(&mut ad, field);
    }
    binding_fields(context, b, trace, |field| lp(&mut ad, field));
    ad
}

/// HMAC-SHA256 keyed with a key's HMAC subkey, with the constant head of the associated
/// data ([`head_fields`]) already absorbed. Made once per key (see
/// [`Key`](super::keyring::Key)); each seal and open clones it and feeds the rest, so
/// neither the key schedule (two SHA-256 blocks) nor the head (about two more) is hashed
/// again per call. The tag is the same as [`protect`]'s over the full associated data.
pub(crate) fn hmac_head(hmac_subkey: &[u8], kid: &str) -> Result<HmacSha256, SealError> {
    let mut mac = new_mac(hmac_subkey)?;
    for field in head_fields(Protection::Hmac, kid) {
        mac_lp(&mut mac, field);
    }
    Ok(mac)
}

fn mac_lp(mac: &mut HmacSha256, field: &[u8]) {
    mac.update(&(field.len() as u64).to_be_bytes());
    mac.update(field);
}

/// The tag of `body` under the HMAC `head` of a key: the rest of the associated data
/// ([`binding_fields`]), then `lp(body)`.
fn hmac_tag(
    head: &HmacSha256,
    context: &str,
    b: &Binding<'_>,
    trace: Option<&str>,
    body: &[u8],
) -> HmacSha256 {
    let mut mac = head.clone();
    binding_fields(context, b, trace, |field| mac_lp(&mut mac, field));
    mac_lp(&mut mac, body);
    mac
}

/// HMAC protection of `body` (`body || tag`) with a key's [`hmac_head`].
pub(crate) fn hmac_seal(
    head: &HmacSha256,
    context: &str,
    b: &Binding<'_>,
    trace: Option<&str>,
    body: &[u8],
) -> Vec<u8> {
    with_tag(body, hmac_tag(head, context, b, trace, body))
}

/// Verifies (in constant time) an HMAC-protected `sealed` with a key's [`hmac_head`];
/// returns the body (a part of `sealed`: no copy).
pub(crate) fn hmac_open<'s>(
    head: &HmacSha256,
    context: &str,
    b: &Binding<'_>,
    trace: Option<&str>,
    sealed: &'s [u8],
) -> Result<&'s [u8], SealError> {
    if sealed.len() < min_sealed_len(Protection::Hmac) {
        return Err(SealError::Malformed("too short"));
    }
    verified(sealed, |body| Ok(hmac_tag(head, context, b, trace, body)))
}

/// `body || tag`, the tag `mac`'s (cut to [`HMAC_TAG_LEN`]).
fn with_tag(body: &[u8], mac: HmacSha256) -> Vec<u8> {
    let tag = mac.finalize().into_bytes();
    let mut out = Vec::with_capacity(body.len() + HMAC_TAG_LEN);
    out.extend_from_slice(body);
    out.extend_from_slice(&tag[..HMAC_TAG_LEN]);
    out
}

/// The body of `body || tag` (`sealed`, at least a tag long) when `mac_of(body)` verifies
/// the tag (in constant time).
fn verified(
    sealed: &[u8],
    mac_of: impl FnOnce(&[u8]) -> Result<HmacSha256, SealError>,
) -> Result<&[u8], SealError> {
    let (body, tag) = sealed.split_at(sealed.len() - HMAC_TAG_LEN);
    mac_of(body)?
        .verify_truncated_left(tag)
        .map_err(|_| SealError::BadSignature)?;
    Ok(body)
}

/// HMAC-SHA256 keyed with `key` (any length is accepted).
fn new_mac(key: &[u8]) -> Result<HmacSha256, SealError> {
    <HmacSha256 as KeyInit>::new_from_slice(key).map_err(|_| SealError::Encrypt)
}

/// Derive the subkey a protection mode uses from a keyring key (once per key, when it
/// enters the keyring).
pub(crate) fn subkey(
    master: &[u8],
    protection: Protection,
) -> Result<Zeroizing<[u8; 32]>, SealError> {
    derive(master, SUBKEY_LABEL, protection.name().as_bytes())
}

/// HMAC-SHA256(`key`, `label || 0x00 || input`): a subkey, or (`TOKEN_KEY_LABEL` and a
/// salt) the key of one AEAD token.
fn derive(key: &[u8], label: &[u8], input: &[u8]) -> Result<Zeroizing<[u8; 32]>, SealError> {
    let mut mac = new_mac(key)?;
    for part in [label, &[0], input] {
        mac.update(part);
    }
    Ok(Zeroizing::new(mac.finalize().into_bytes().into()))
}

/// When a state was sealed and until when it is valid (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Times {
    pub(crate) issued_at: u64,
    pub(crate) expires_at: u64,
}

/// Serialise a body (its payload already JSON text, at most `max_payload` bytes) with its
/// issue time and expiry; with `compress`, the payload is compressed (LZ4) when that makes
/// it shorter.
pub(crate) fn encode_body_json(
    times: Times,
    round: u32,
    layout: &str,
    json: &[u8],
    compress: bool,
    max_payload: usize,
) -> Result<Vec<u8>, SealError> {
    if json.len() > max_payload {
        return Err(SealError::PayloadTooLarge {
            len: json.len(),
            max: max_payload,
        });
    }
    let mut packed_payload = None;
    if compress
        && json.len() >= COMPRESS_MIN
        && let Ok(len) = u32::try_from(json.len())
    {
        let packed = lz4_flex::block::compress(json);
        if packed.len() + 5 < json.len() {
            let mut out = Vec::with_capacity(packed.len() + 5);
            out.push(COMPRESSED_PAYLOAD);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&packed);
            packed_payload = Some(out);
        }
    }
    let payload = packed_payload.as_deref().unwrap_or(json);
    let layout = layout.as_bytes();
    let layout_len = u8::try_from(layout.len()).map_err(|_| SealError::LayoutTooLong {
        len: layout.len(),
        max: MAX_LAYOUT_LEN,
    })?;
    let (Ok(issued), Ok(expires)) = (
        u32::try_from(times.issued_at),
        u32::try_from(times.expires_at),
    ) else {
        return Err(SealError::Encrypt);
    };
    let mut out = Vec::with_capacity(BODY_FIXED + 4 + layout.len() + payload.len());
    out.extend_from_slice(&issued.to_be_bytes());
    out.extend_from_slice(&expires.to_be_bytes());
    put_varint(&mut out, round);
    out.push(layout_len);
    out.extend_from_slice(layout);
    out.extend_from_slice(payload);
    Ok(out)
}

/// Appends `v` as LEB128 (seven bits per byte, low bits first, high bit = more follow).
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 `u32` written by [`put_varint`]; refuses overlong and oversized encodings
/// (so that one round has one encoding).
fn take_varint(bytes: &[u8]) -> Result<(u32, &[u8]), SealError> {
    let mut v: u32 = 0;
    for (i, &b) in bytes.iter().enumerate().take(5) {
        let bits = u32::from(b & 0x7f);
        if i == 4 && bits > 0x0f {
            return Err(SealError::Malformed("round out of range"));
        }
        v |= bits << (7 * i);
        if b & 0x80 == 0 {
            if i > 0 && b == 0 {
                return Err(SealError::Malformed("overlong round"));
            }
            return Ok((v, &bytes[i + 1..]));
        }
    }
    Err(SealError::Malformed("body too short"))
}

/// An authenticated body, its payload still JSON text.
pub(crate) struct RawBody<'a> {
    pub(crate) times: Times,
    pub(crate) round: u32,
    pub(crate) layout: String,
    /// The payload's JSON text: in place, or inflated when it was compressed.
    pub(crate) json: std::borrow::Cow<'a, [u8]>,
}

/// Parse an authenticated body, leaving its payload as JSON text: at most `max_payload`
/// bytes of it, a compressed one refused by its stated length before it is inflated.
pub(crate) fn decode_body_json(bytes: &[u8], max_payload: usize) -> Result<RawBody<'_>, SealError> {
    let (issued, rest) = bytes
        .split_first_chunk::<4>()
        .ok_or(SealError::Malformed("body too short"))?;
    let (expiry, rest) = rest
        .split_first_chunk::<4>()
        .ok_or(SealError::Malformed("body too short"))?;
    let (round, rest) = take_varint(rest)?;
    let (&layout_len, rest) = rest
        .split_first()
        .ok_or(SealError::Malformed("body too short"))?;
    let layout_len = usize::from(layout_len);
    if rest.len() < layout_len {
        return Err(SealError::Malformed("layout length out of range"));
    }
    let (layout, payload) = rest.split_at(layout_len);
    let layout = std::str::from_utf8(layout)
        .map_err(|_| SealError::Malformed("layout is not UTF-8"))?
        .to_owned();
    let json = match payload.split_first() {
        Some((&COMPRESSED_PAYLOAD, packed)) => {
            let (len, packed) = packed
                .split_first_chunk::<4>()
                .ok_or(SealError::Malformed("compressed payload too short"))?;
            let len = u32::from_le_bytes(*len) as usize;
            if len > max_payload {
                return Err(SealError::PayloadTooLarge {
                    len,
                    max: max_payload,
                });
            }
            let inflated = lz4_flex::block::decompress(packed, len)
                .map_err(|_| SealError::Malformed("payload does not inflate"))?;
            if inflated.len() != len {
                return Err(SealError::Malformed("payload does not inflate"));
            }
            std::borrow::Cow::Owned(inflated)
        }
        _ if payload.len() > max_payload => {
            return Err(SealError::PayloadTooLarge {
                len: payload.len(),
                max: max_payload,
            });
        }
        _ => std::borrow::Cow::Borrowed(payload),
    };
    Ok(RawBody {
        times: Times {
            issued_at: u64::from(u32::from_be_bytes(*issued)),
            expires_at: u64::from(u32::from_be_bytes(*expiry)),
        },
        round,
        layout,
        json,
    })
}

/// Length of the sealed bytes for a body of `body_len` bytes.
pub(crate) fn sealed_len(protection: Protection, body_len: usize) -> usize {
    match protection {
        Protection::Hmac => body_len.saturating_add(HMAC_TAG_LEN),
        Protection::Aes256Gcm | Protection::ChaCha20Poly1305 => {
            body_len.saturating_add(SALT_LEN + NONCE_LEN + AEAD_TAG_LEN)
        }
    }
}

/// Smallest possible sealed byte string (an empty body cannot occur, but the
/// fixed part of the body is required).
pub(crate) fn min_sealed_len(protection: Protection) -> usize {
    sealed_len(protection, BODY_FIXED)
}

/// The HMAC of `protect`/`unprotect` fed with the associated data `ad` and `body`.
fn body_mac(key: &[u8], ad: &[u8], body: &[u8]) -> Result<HmacSha256, SealError> {
    let mut mac = new_mac(key)?;
    mac.update(ad);
    mac_lp(&mut mac, body);
    Ok(mac)
}

/// Protect `body` under `key` (the protection's subkey of a keyring key) with associated
/// data `ad`.
pub(crate) fn protect(
    protection: Protection,
    key: &[u8],
    ad: &[u8],
    body: &[u8],
) -> Result<Vec<u8>, SealError> {
    match protection {
        Protection::Hmac => Ok(with_tag(body, body_mac(key, ad, body)?)),
        #[cfg(feature = "aead")]
        Protection::Aes256Gcm | Protection::ChaCha20Poly1305 => {
            aead_protect(protection, key, ad, body)
        }
        // Without the `aead` feature the AEAD protections neither seal nor open.
        #[cfg(not(feature = "aead"))]
        Protection::Aes256Gcm | Protection::ChaCha20Poly1305 => {
            Err(SealError::AeadUnavailable(protection.name()))
        }
    }
}

/// Verify (and for AEAD decrypt) `sealed` under `key` (the protection's subkey) with associated data
/// `ad`; returns the body. Verification is constant-time.
pub(crate) fn unprotect(
    protection: Protection,
    key: &[u8],
    ad: &[u8],
    sealed: &[u8],
) -> Result<Vec<u8>, SealError> {
    if sealed.len() < min_sealed_len(protection) {
        return Err(SealError::Malformed("too short"));
    }
    match protection {
        Protection::Hmac => verified(sealed, |body| body_mac(key, ad, body)).map(<[u8]>::to_vec),
        #[cfg(feature = "aead")]
        Protection::Aes256Gcm | Protection::ChaCha20Poly1305 => {
            aead_unprotect(protection, key, ad, sealed)
        }
        #[cfg(not(feature = "aead"))]
        Protection::Aes256Gcm | Protection::ChaCha20Poly1305 => {
            Err(SealError::AeadUnavailable(protection.name()))
        }
    }
}

/// AEAD protection (feature `aead`): a random salt and nonce, a per-token key derived from
/// the salt, then the cipher; the sealed bytes are `salt ‖ nonce ‖ ciphertext ‖ tag`.
#[cfg(feature = "aead")]
fn aead_protect(
    protection: Protection,
    key: &[u8],
    ad: &[u8],
    body: &[u8],
) -> Result<Vec<u8>, SealError> {
    use aes_gcm::Aes256Gcm;
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use chacha20poly1305::ChaCha20Poly1305;
    let mut head = [0u8; SALT_LEN + NONCE_LEN];
    getrandom::getrandom(&mut head).map_err(|_| SealError::Rng)?;
    let (salt, nonce) = head.split_at(SALT_LEN);
    let nonce: &[u8; NONCE_LEN] = nonce.try_into().map_err(|_| SealError::Encrypt)?;
    let key = derive(key, TOKEN_KEY_LABEL, salt)?;
    let payload = Payload { msg: body, aad: ad };
    let ct = match protection {
        Protection::Aes256Gcm => Aes256Gcm::new_from_slice(&key[..])
            .map_err(|_| SealError::Encrypt)?
            .encrypt(nonce.into(), payload),
        _ => ChaCha20Poly1305::new_from_slice(&key[..])
            .map_err(|_| SealError::Encrypt)?
            .encrypt(nonce.into(), payload),
    }
    .map_err(|_| SealError::Encrypt)?;
    let mut out = Vec::with_capacity(head.len() + ct.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(&ct);
    Ok(out)
}

/// AEAD verification and decryption (feature `aead`) of `salt ‖ nonce ‖ ciphertext ‖ tag`.
#[cfg(feature = "aead")]
fn aead_unprotect(
    protection: Protection,
    key: &[u8],
    ad: &[u8],
    sealed: &[u8],
) -> Result<Vec<u8>, SealError> {
    use aes_gcm::Aes256Gcm;
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use chacha20poly1305::ChaCha20Poly1305;
    let (salt, rest) = sealed.split_at(SALT_LEN);
    let (nonce, ct) = rest.split_at(NONCE_LEN);
    let nonce: &[u8; NONCE_LEN] = nonce
        .try_into()
        .map_err(|_| SealError::Malformed("too short"))?;
    let key = derive(key, TOKEN_KEY_LABEL, salt)?;
    let payload = Payload { msg: ct, aad: ad };
    match protection {
        Protection::Aes256Gcm => Aes256Gcm::new_from_slice(&key[..])
            .map_err(|_| SealError::Encrypt)?
            .decrypt(nonce.into(), payload),
        _ => ChaCha20Poly1305::new_from_slice(&key[..])
            .map_err(|_| SealError::Encrypt)?
            .decrypt(nonce.into(), payload),
    }
    .map_err(|_| SealError::BadSignature)
}

#[cfg(test)]
mod hmac_head_tests {
    use super::*;
    use crate::principal::Principal;

    /// The pre-keyed path feeds the MAC exactly the bytes of the full associated data: same
    /// tags as `protect`/`unprotect`, and each opens the other's tokens.
    #[test]
    fn the_pre_keyed_hmac_gives_the_same_tags_as_the_full_associated_data() {
        let key = subkey(&[9u8; 32], Protection::Hmac).unwrap();
        let head = hmac_head(&key[..], "k1").unwrap();
        for principal in [Principal::anonymous(), Principal::named("alice")] {
            let b = Binding::new(
                &principal,
                "tools/call",
                "forecast",
                &serde_json::json!({"city": "Oslo"}),
            );
            let trace = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX";
            for (body, t) in [
                (&[1u8; 24][..], None),
                (&[7u8; 300][..], None),
                (&[7u8; 300][..], Some(trace)),
            ] {
                let ad = associated_data(Protection::Hmac, "k1", "ctx", &b, t);
                let full = protect(Protection::Hmac, &key[..], &ad, body).unwrap();
                assert_eq!(hmac_seal(&head, "ctx", &b, t, body), full);
                assert_eq!(hmac_open(&head, "ctx", &b, t, &full).unwrap(), body);
                assert_eq!(
                    unprotect(Protection::Hmac, &key[..], &ad, &full).unwrap(),
                    body
                );
                assert_eq!(
                    hmac_open(&head, "other", &b, t, &full).unwrap_err(),
                    SealError::BadSignature
                );
                // the trace segment is bound: added, removed or another, the tag fails
                let other = match t {
                    Some(_) => None,
                    None => Some(trace),
                };
                assert_eq!(
                    hmac_open(&head, "ctx", &b, other, &full).unwrap_err(),
                    SealError::BadSignature
                );
            }
        }
    }
}

#[cfg(test)]
mod varint_tests {
    use super::*;

    #[test]
    fn rounds_have_one_encoding_and_bad_ones_are_refused() {
        for v in [0u32, 1, 127, 128, 300, 16_383, 16_384, u32::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let (back, rest) = take_varint(&out).unwrap();
            assert_eq!((back, rest.len()), (v, 0), "{v}");
        }
        assert_eq!(
            {
                let mut out = Vec::new();
                put_varint(&mut out, 127);
                out
            },
            [0x7f]
        );
        // overlong: 0 written in two bytes
        assert!(take_varint(&[0x80, 0x00]).is_err());
        // more than 32 bits
        assert!(take_varint(&[0xff, 0xff, 0xff, 0xff, 0x1f]).is_err());
        // too long, or cut short
        assert!(take_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]).is_err());
        assert!(take_varint(&[0x80]).is_err());
        assert!(take_varint(&[]).is_err());
    }
}
