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

/// `"fnv1a64:<16 hex digits>"` for this tool.
pub fn layout(a: &Analysis, body: &syn::Block) -> String {
    let mut text = String::new();
    for s in &a.machine.stages {
        if let StageKind::Resume(k) = s.kind {
            let vars: Vec<String> = s.vars.iter().map(|v| v.ident.to_string()).collect();
            let keys = a.machine.points[k].keys.join(",");
            text.push_str(&format!("{}({})[{}];", s.name, vars.join(","), keys));
        }
    }
    text.push('|');
    text.push_str(&quote::ToTokens::to_token_stream(body).to_string());
    format!("fnv1a64:{:016x}", fnv1a64(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vector() {
        assert_eq!(super::fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(super::fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    }
}
