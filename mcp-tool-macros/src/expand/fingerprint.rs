//! The layout fingerprint: FNV-1a (64 bit) over the stored stages, their variables and the
//! body's tokens. A state whose fingerprint differs from the running build's never resumes.

use crate::analyse::{Analysis, StageKind};

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// The tool's fingerprint: the 64-bit hash in 11 base64url characters (it travels in every
/// state, so it is kept short; it tells builds apart, it does not protect anything).
pub fn layout(a: &Analysis, body: &syn::Block) -> String {
    let mut text = String::new();
    for s in &a.machine.stages {
        if let StageKind::Resume(k) = s.kind {
            let vars: Vec<String> = s
                .vars
                .iter()
                .map(|v| v.ident.to_string())
                .chain(s.soft.iter().map(|v| format!("~{}", v.ident)))
                .collect();
            let keys = a.machine.points[k].keys.join(",");
            text.push_str(&format!("{}({})[{}];", s.name, vars.join(","), keys));
        }
    }
    text.push('|');
    text.push_str(&quote::ToTokens::to_token_stream(body).to_string());
    base64url_u64(fnv1a64(text.as_bytes()))
}

/// `v` big-endian in unpadded base64url (11 characters).
fn base64url_u64(v: u64) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // 64 bits = ten 6-bit groups and 4 bits, left-aligned in the eleventh character
    let wide = u128::from(v) << 2;
    (0..11)
        .rev()
        .map(|i| char::from(ALPHABET[((wide >> (6 * i)) & 0x3f) as usize]))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vector() {
        assert_eq!(super::fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(super::fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        // as base64url of the 8 big-endian bytes, unpadded
        assert_eq!(super::base64url_u64(0), "AAAAAAAAAAA");
        assert_eq!(super::base64url_u64(u64::MAX), "__________8");
        assert_eq!(super::base64url_u64(0x0123_4567_89ab_cdef), "ASNFZ4mrze8");
    }
}
