//! Share links: the scenario (not the results) in the URL fragment, compact and versioned.
//!
//! Format: `#s=v1.<base64url(zlib(minified JSON))>`. The zlib wrapper's Adler-32 checksum costs
//! 6 bytes and turns a damaged link into an error instead of a silently different scenario.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as BASE64URL;
use base64::Engine as _;
use miniz_oxide::inflate::TINFLStatus;
use std::fmt;

/// The fragment key that marks a share link.
pub const KEY: &str = "s=";
/// The only link version this build reads and writes.
pub const VERSION: &str = "v1";
/// Largest scenario a link may inflate to; anything bigger is refused (a deflate bomb).
pub const MAX_SCENARIO_BYTES: usize = 1 << 20;
/// Compression level: the highest, since links are made rarely and read by people.
const LEVEL: u8 = 10;

/// Why a scenario could not be made into a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// The scenario text is not JSON, so there is nothing well-defined to share.
    NotJson(String),
    /// The minified scenario is bigger than a link may carry.
    TooLarge {
        /// The minified scenario's size, bytes.
        bytes: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(e) => write!(f, "the scenario is not valid JSON ({e})"),
            Self::TooLarge { bytes } => write!(
                f,
                "the scenario is {bytes} bytes, more than a link may carry ({MAX_SCENARIO_BYTES})"
            ),
        }
    }
}

/// Every way a share link can be broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// No `v<n>.` prefix after `s=`.
    MissingVersion,
    /// A version this build does not know (e.g. a link from a newer release).
    UnknownVersion(String),
    /// The payload has a character outside base64url's `A–Z a–z 0–9 - _`, at this offset.
    StrayCharacter {
        /// The character's offset in the payload.
        position: usize,
    },
    /// The payload's last character carries bits beyond the data: the text was altered.
    BadEncoding,
    /// The compressed data ends early: the link was cut off.
    Truncated,
    /// The compressed data is damaged or its checksum does not match.
    Corrupt,
    /// The scenario would inflate past [`MAX_SCENARIO_BYTES`].
    TooLarge,
    /// The inflated bytes are not UTF-8 text.
    NotUtf8,
    /// The inflated text is not JSON.
    NotJson(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingVersion => f.write_str("it has no version"),
            Self::UnknownVersion(v) => write!(f, "its version '{v}' is not one this app reads"),
            Self::StrayCharacter { position } => {
                write!(f, "it has a stray character at position {position}")
            }
            Self::BadEncoding => f.write_str("its encoding is damaged"),
            Self::Truncated => f.write_str("it was cut off"),
            Self::Corrupt => f.write_str("its data is corrupt"),
            Self::TooLarge => write!(
                f,
                "it unpacks to more than {} bytes",
                opal::count(MAX_SCENARIO_BYTES as f64)
            ),
            Self::NotUtf8 => f.write_str("it does not hold text"),
            Self::NotJson(e) => write!(f, "it does not hold JSON ({e})"),
        }
    }
}

/// Makes the URL fragment (without `#`) that carries `scenario_json`.
pub fn encode(scenario_json: &str) -> Result<String, EncodeError> {
    let value: serde_json::Value =
        serde_json::from_str(scenario_json).map_err(|e| EncodeError::NotJson(e.to_string()))?;
    let minified = value.to_string();
    if minified.len() > MAX_SCENARIO_BYTES {
        return Err(EncodeError::TooLarge {
            bytes: minified.len(),
        });
    }
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(minified.as_bytes(), LEVEL);
    Ok(format!("{KEY}{VERSION}.{}", BASE64URL.encode(&packed)))
}

/// Reads a URL fragment (with or without `#`). `None` when it is not a share link at all;
/// otherwise the scenario, pretty-printed for the editor, or why the link is broken.
pub fn decode(fragment: &str) -> Option<Result<String, DecodeError>> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    let payload = fragment.strip_prefix(KEY)?;
    Some(decode_payload(payload))
}

fn decode_payload(payload: &str) -> Result<String, DecodeError> {
    let (version, data) = payload
        .split_once('.')
        .filter(|(v, _)| v.starts_with('v'))
        .ok_or(DecodeError::MissingVersion)?;
    if version != VERSION {
        return Err(DecodeError::UnknownVersion(version.to_string()));
    }
    // Base64url without padding (RFC 4648 §5), rejecting stray low bits so that two texts
    // never decode alike.
    let packed = BASE64URL.decode(data).map_err(|e| match e {
        base64::DecodeError::InvalidByte(position, _) => DecodeError::StrayCharacter { position },
        // Padding is not part of a link.
        base64::DecodeError::InvalidPadding => DecodeError::StrayCharacter {
            position: data.find('=').unwrap_or(0),
        },
        // Only cutting the text short leaves a lone character behind.
        base64::DecodeError::InvalidLength(_) => DecodeError::Truncated,
        base64::DecodeError::InvalidLastSymbol(..) => DecodeError::BadEncoding,
    })?;
    let bytes =
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&packed, MAX_SCENARIO_BYTES)
            .map_err(|e| match e.status {
                TINFLStatus::HasMoreOutput => DecodeError::TooLarge,
                TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                    DecodeError::Truncated
                }
                _ => DecodeError::Corrupt,
            })?;
    let text = String::from_utf8(bytes).map_err(|_| DecodeError::NotUtf8)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| DecodeError::NotJson(e.to_string()))?;
    let mut pretty =
        serde_json::to_string_pretty(&value).map_err(|e| DecodeError::NotJson(e.to_string()))?;
    pretty.push('\n');
    Ok(pretty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Builds a fragment around arbitrary bytes, to forge broken links.
    fn forge(bytes: &[u8]) -> String {
        format!("#s=v1.{}", BASE64URL.encode(bytes))
    }

    fn decoded(fragment: &str) -> Result<String, DecodeError> {
        decode(fragment).expect("is a share link")
    }

    /// A realistic scenario of about 2 KB when pretty-printed, as people will share.
    fn typical_scenario() -> String {
        let doc = json!({
            "version": 1,
            "simulation": { "seed": 42, "duration_s": 600, "max_requests": 20000 },
            "model": { "name": "meta-llama/Llama-3.1-8B-Instruct", "num_layers": 32,
                       "hidden_size": 4096, "num_kv_heads": 8, "head_dim": 128, "dtype_bytes": 2 },
            "hardware": { "gpu": "H100-SXM", "gpus_per_worker": 1, "memory_gib": 80,
                          "hbm_bandwidth_gbps": 3350, "tflops": 989 },
            "worker": { "num_workers": 4, "max_num_seqs": 256, "max_num_batched_tokens": 8192,
                        "enable_chunked_prefill": true, "gpu_memory_utilization": 0.9 },
            "kv_cache": { "block_size": 16, "enable_prefix_caching": true,
                          "offload": { "cpu": { "capacity_gib": 64, "bandwidth_gbps": 25 },
                                       "disk": { "capacity_gib": 512, "bandwidth_gbps": 5 } } },
            "router": { "policy": "prefix_aware", "load_weight": 0.5, "prefix_weight": 1.0,
                        "autoscaler": { "enabled": true, "min_workers": 2, "max_workers": 8,
                                        "scale_up_queue_depth": 32, "cooldown_s": 30 } },
            "workload": { "stages": [
                { "name": "warm-up", "duration_s": 60, "request_rate": 5, "arrival": "poisson",
                  "prompt_tokens": { "distribution": "normal", "mean": 1024, "stddev": 256 },
                  "output_tokens": { "distribution": "normal", "mean": 256, "stddev": 64 },
                  "shared_prefix": { "groups": 8, "tokens": 512 } },
                { "name": "steady", "duration_s": 420, "request_rate": 20, "arrival": "poisson",
                  "prompt_tokens": { "distribution": "normal", "mean": 2048, "stddev": 512 },
                  "output_tokens": { "distribution": "normal", "mean": 384, "stddev": 96 },
                  "shared_prefix": { "groups": 16, "tokens": 1024 } },
                { "name": "burst", "duration_s": 120, "request_rate": 60, "arrival": "gamma",
                  "burstiness": 0.5,
                  "prompt_tokens": { "distribution": "uniform", "min": 256, "max": 4096 },
                  "output_tokens": { "distribution": "uniform", "min": 64, "max": 1024 } }
            ] }
        });
        serde_json::to_string_pretty(&doc).unwrap()
    }

    #[test]
    fn round_trip_restores_the_same_document() {
        let text = typical_scenario();
        let fragment = encode(&text).unwrap();
        let back = decoded(&format!("#{fragment}")).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&back).unwrap(),
            serde_json::from_str::<Value>(&text).unwrap()
        );
        // Pretty text in, the same pretty text out: the editor shows what was shared.
        assert_eq!(back.trim_end(), text);
    }

    #[test]
    fn fractional_numbers_survive_exactly() {
        // 0.1 is not exact in binary; serde_json prints the shortest text that reads back the same.
        let text = r#"{"rate":0.1,"weight":1e-7,"big":9007199254740993}"#;
        let back = decoded(&encode(text).unwrap()).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&back).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn typical_two_kilobyte_scenario_makes_a_short_link() {
        let text = typical_scenario();
        let fragment = encode(&text).unwrap();
        println!(
            "share link: {} B pretty, {} B minified -> fragment of {} characters",
            text.len(),
            serde_json::from_str::<Value>(&text)
                .unwrap()
                .to_string()
                .len(),
            fragment.len() + 1
        );
        assert!(
            (1800..2600).contains(&text.len()),
            "scenario is {} B",
            text.len()
        );
        assert!(
            fragment.len() < 1000,
            "fragment is {} characters",
            fragment.len()
        );
    }

    #[test]
    fn the_default_scenario_link_is_under_a_thousand_characters() {
        // The page opens on this document; its link must stay short enough to paste into a
        // slide or a chat (leaving room for the site's address).
        let fragment = encode(opal::document::default_document()).unwrap();
        assert!(
            fragment.len() < 900,
            "fragment is {} characters",
            fragment.len()
        );
    }

    #[test]
    fn whitespace_does_not_change_the_link() {
        // The link carries the document, not its formatting.
        assert_eq!(
            encode("{ \"a\" : [1, 2] }").unwrap(),
            encode("{\"a\":[1,2]}").unwrap()
        );
    }

    #[test]
    fn fragments_without_the_key_are_not_share_links() {
        assert_eq!(decode(""), None);
        assert_eq!(decode("#"), None);
        assert_eq!(decode("#results"), None);
    }

    #[test]
    fn text_that_is_not_json_cannot_be_shared() {
        assert!(matches!(encode("{ \"a\": "), Err(EncodeError::NotJson(_))));
    }

    #[test]
    fn missing_version_is_reported() {
        assert_eq!(
            decoded("#s=eJyrrgUAAXUA-Q"),
            Err(DecodeError::MissingVersion)
        );
        assert_eq!(
            decoded("#s=x.eJyrrgUAAXUA-Q"),
            Err(DecodeError::MissingVersion)
        );
    }

    #[test]
    fn unknown_version_is_reported() {
        let payload = encode("{}").unwrap().replace("v1.", "v2.");
        assert_eq!(
            decoded(&payload),
            Err(DecodeError::UnknownVersion("v2".into()))
        );
    }

    #[test]
    fn bad_base64_is_reported() {
        let link = encode("{}").unwrap();
        let broken = format!("{}*{}", &link[..8], &link[8..]);
        assert!(matches!(
            decoded(&broken),
            Err(DecodeError::StrayCharacter { position: 3 })
        ));
        // Padding is not part of a link either.
        assert_eq!(
            decoded(&format!("{link}==")),
            Err(DecodeError::StrayCharacter {
                position: link.len() - 5
            })
        );
    }

    #[test]
    fn links_made_elsewhere_open_byte_for_byte() {
        // Python's zlib level 9 and urlsafe_b64encode, padding removed: the format is plain
        // RFC 4648 base64url of zlib, so links from any encoder (and older builds) open.
        let link = "#s=v1.eNqrVirOzC3NSSzJzM9TsqpWKk5NTVGyMq_VUSrKLy1JLQKJFeTnZCZXIrOUchMr4guKUtMyK5Rqa2sBWjwY2A";
        let text = decode(link).unwrap().unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            json!({"simulation": {"seed": 7}, "router": {"policy": {"policy": "max_prefix"}}})
        );
        // RFC 4648 §10 vectors without padding, and the URL alphabet's `-` and `_`.
        for (plain, coded) in [
            (&b""[..], ""),
            (b"f", "Zg"),
            (b"fo", "Zm8"),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg"),
            (b"fooba", "Zm9vYmE"),
            (b"foobar", "Zm9vYmFy"),
            (&[0xfb, 0xff], "-_8"),
        ] {
            assert_eq!(BASE64URL.encode(plain), coded);
            assert_eq!(forge(plain), format!("#s=v1.{coded}"));
        }
        // "Zh" differs from "Zg" ('f') only in bits no byte uses: refused, not read as 'f'.
        assert_eq!(decoded("#s=v1.Zh"), Err(DecodeError::BadEncoding));
    }

    #[test]
    fn truncated_link_is_reported() {
        let link = encode(&typical_scenario()).unwrap();
        let start = "s=v1.".len();
        // Cut after whole 4-character groups the base64 is well-formed, so inflate finds the cut.
        let cut = start + (link.len() - start) / 2 / 4 * 4;
        assert_eq!(decoded(&link[..cut]), Err(DecodeError::Truncated));
        // 4n + 1 characters leave a lone character: also a cut.
        assert_eq!(decoded(&link[..cut + 1]), Err(DecodeError::Truncated));
        // Wherever the link is cut, it is refused, never read as a different scenario.
        for end in start..link.len() {
            assert!(decoded(&link[..end]).is_err(), "cut at {end} was accepted");
        }
    }

    #[test]
    fn damaged_data_is_reported_as_corrupt() {
        let text = typical_scenario();
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(text.as_bytes(), 6);
        // Flip one bit in the checksum: the data inflates but no longer matches it.
        let mut bad_sum = packed.clone();
        *bad_sum.last_mut().unwrap() ^= 1;
        assert_eq!(decoded(&forge(&bad_sum)), Err(DecodeError::Corrupt));
        // A zlib header with the wrong check bits.
        assert_eq!(
            decoded(&forge(&[0x78, 0x00, 0x01])),
            Err(DecodeError::Corrupt)
        );
    }

    #[test]
    fn deflate_bomb_is_refused() {
        // 2 MiB of spaces compresses to a few KB but must not be inflated past the cap.
        let bomb = vec![b' '; 2 * MAX_SCENARIO_BYTES];
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(&bomb, 10);
        assert!(packed.len() < 10_000);
        assert_eq!(decoded(&forge(&packed)), Err(DecodeError::TooLarge));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_reported() {
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(&[0xff, 0xfe, 0x7b], 6);
        assert_eq!(decoded(&forge(&packed)), Err(DecodeError::NotUtf8));
    }

    #[test]
    fn text_that_is_not_json_is_reported() {
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(b"{\"seed\": 4", 6);
        assert!(matches!(
            decoded(&forge(&packed)),
            Err(DecodeError::NotJson(_))
        ));
    }

    #[test]
    fn oversized_scenarios_cannot_be_shared() {
        let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(MAX_SCENARIO_BYTES));
        assert_eq!(
            encode(&big),
            Err(EncodeError::TooLarge {
                bytes: MAX_SCENARIO_BYTES + 10
            })
        );
    }
}
