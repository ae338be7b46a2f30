//! Seal + open of one state payload, `--calls` times, with our `Sealer` (HMAC-SHA256,
//! compression off: the codec alone) or rmcp 3.11's `RequestStateCodec` (HMAC-SHA256), for
//! instruction counts under callgrind (`scripts/callgrind.sh`: a run with N calls minus a
//! run with none, divided by N). The payloads are the ones of `benches/mrtr.rs`'s `seal`
//! group.
//!
//! ```text
//! seal_cost ours|rmcp small|1k|16k CALLS
//! ```
//! An example (not a binary) because rmcp is a dev-dependency of this package.

use std::hint::black_box;
use std::time::Duration;

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{Binding, Keyring, SealConfig, Sealer, StateBody};
use rmcp::model::{RequestStateCodec, SealOptions};
use serde_json::{Value, json};

const KEY: &[u8] = b"bench-key-0123456789abcdef-0123456789";
const TTL: Duration = Duration::from_secs(3600);

fn payload(n: usize) -> Value {
    json!({
        "state": {"stage": "s1", "vars": {"blob": "x".repeat(n)}},
        "pending": {},
        "journal": {}
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [codec, size, calls] = args.as_slice() else {
        return Err("usage: seal_cost ours|rmcp small|1k|16k CALLS".into());
    };
    let n = match size.as_str() {
        "small" => 64,
        "1k" => 1024,
        "16k" => 16 * 1024,
        _ => return Err("size: small, 1k or 16k".into()),
    };
    let calls: u64 = calls.parse()?;
    let principal = Principal::anonymous();
    let city = json!({"city": "Oslo"});
    let body = StateBody {
        round: 1,
        layout: "forecast/v1".into(),
        payload: payload(n),
    };
    match codec.as_str() {
        "ours" => {
            let sealer = Sealer::new(
                Keyring::new("k1", KEY.to_vec())?,
                SealConfig::default().with_ttl(TTL).with_compress(false),
            );
            let binding = Binding::new(&principal, "tools/call", "forecast", &city);
            for _ in 0..calls {
                let token = sealer.seal(&binding, black_box(&body), None)?;
                black_box(sealer.open(&binding, black_box(&token))?);
            }
        }
        "rmcp" => {
            let codec = RequestStateCodec::try_new(KEY.to_vec())?;
            let ad = "tools/call\0forecast\0Oslo";
            let opts = SealOptions::new().associated_data(ad.as_bytes()).ttl(TTL);
            for _ in 0..calls {
                let token = codec.seal_json_with(black_box(&body.payload), &opts)?;
                let back: Value = codec.open_json_with(black_box(&token), ad.as_bytes())?;
                black_box(back);
            }
        }
        _ => return Err("codec: ours or rmcp".into()),
    }
    Ok(())
}
