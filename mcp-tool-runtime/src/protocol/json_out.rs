//! The JSON of the results every round writes, written by hand: member names as the text
//! they are, and strings that need no escaping (most of them; a sealed `requestState`
//! always) copied between quotes after one vectorized check instead of serde_json's
//! byte-by-byte escaping loop. Each writer puts out what `Serialize` writes, byte for byte
//! (tested against it), and hands anything unusual to `Serialize`.

use super::{ContentBlock, ElicitParams, InputRequest, TextContent};

/// `text` written as a JSON string at the end of `out`: as it is between quotes when nothing
/// in it needs escaping (a sealed `requestState` never does), else escaped by serde_json. The
/// check runs over every byte without stopping early, which the compiler vectorizes: much
/// cheaper than serde_json's byte-by-byte escaping loop.
pub(crate) fn write_json_str(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if needs_escape(text) {
        return serde_json::to_writer(out, text);
    }
    out.reserve(text.len() + 2);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
    Ok(())
}

/// Whether JSON escapes anything in `text` (a control character, a quote, a backslash);
/// if not, `text` between quotes is its JSON string. The check runs over every byte without
/// stopping early, which the compiler vectorizes.
pub(crate) fn needs_escape(text: &str) -> bool {
    text.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}

impl InputRequest {
    /// Its JSON (what `Serialize` writes, byte for byte) at the end of `out`: a form
    /// elicitation without other members, the usual request, with its member names written
    /// as text and its message through [`write_json_str`]; any other
    /// through `Serialize`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            InputRequest::Elicit(ElicitParams::Form(p)) if p.extra.is_empty() => {
                out.extend_from_slice(
                    br#"{"method":"elicitation/create","params":{"mode":"form","message":"#,
                );
                write_json_str(out, &p.message)?;
                out.extend_from_slice(br#","requestedSchema":"#);
                serde_json::to_writer(&mut *out, &p.requested_schema)?;
                out.extend_from_slice(b"}}");
                Ok(())
            }
            _ => serde_json::to_writer(out, self),
        }
    }
}

impl ContentBlock {
    /// Its JSON (what `Serialize` writes, byte for byte) at the end of `out`: a plain text
    /// block, the usual one, with its member names written as text and its text through
    /// [`write_json_str`]; any other through `Serialize`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            ContentBlock::Text(TextContent {
                text,
                annotations: None,
                meta: None,
            }) => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                write_json_str(out, text)?;
                out.push(b'}');
                Ok(())
            }
            _ => serde_json::to_writer(out, self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ASCII character, alone and inside text, a sealed state, and non-ASCII text are
    /// written as serde_json writes them.
    #[test]
    fn a_string_is_written_as_serde_writes_it() {
        let mut texts: Vec<String> = (0u8..=0x7f).map(|b| char::from(b).to_string()).collect();
        texts.extend((0u8..=0x7f).map(|b| format!("ab{}cd", char::from(b))));
        texts.extend(
            [
                "",
                "mts3.k1.AbC-_09xyz",
                "é ü 🦀 \u{2028} \u{7f}",
                "Please provide your GitHub username",
            ]
            .map(String::from),
        );
        for text in texts {
            let mut out = b"[".to_vec();
            write_json_str(&mut out, &text).expect("writes");
            assert_eq!(
                String::from_utf8(out).expect("UTF-8"),
                format!("[{}", serde_json::to_string(&text).expect("serializes")),
                "{text:?}"
            );
        }
    }
}
