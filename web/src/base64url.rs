//! Base64url without padding (RFC 4648 §5): the alphabet that survives a URL fragment unescaped.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Why a base64url string could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base64Error {
    /// A character outside `A–Z a–z 0–9 - _`, at this byte offset.
    BadCharacter { position: usize },
    /// The length leaves a single dangling character, which cannot encode a byte.
    BadLength,
    /// The last character carries bits beyond the data, so the text was altered.
    NonCanonical,
}

/// Encodes bytes as base64url, no padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        // A chunk of k bytes needs k + 1 characters.
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes base64url text (padding not allowed).
pub fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let sextets = text
        .bytes()
        .enumerate()
        .map(|(position, c)| sextet(c).ok_or(Base64Error::BadCharacter { position }))
        .collect::<Result<Vec<u8>, _>>()?;
    if sextets.len() % 4 == 1 {
        return Err(Base64Error::BadLength);
    }
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for chunk in sextets.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &s)| n | (u32::from(s) << (18 - 6 * i)));
        let bytes = chunk.len() - 1;
        // Bits below the last whole byte must be zero, or two texts would decode alike.
        if n & ((1u32 << (24 - 8 * bytes)) - 1) != 0 {
            return Err(Base64Error::NonCanonical);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..=bytes]);
    }
    Ok(out)
}

fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_vectors_without_padding() {
        // RFC 4648 §10 test vectors, padding removed.
        let cases = [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn url_alphabet_replaces_plus_and_slash() {
        // 0xfb 0xff = 111110 111111 1111(00): sextets 62, 63, 60 -> "-_8" (standard base64: "+/8").
        assert_eq!(encode(&[0xfb, 0xff]), "-_8");
        assert_eq!(decode("-_8").unwrap(), vec![0xfb, 0xff]);
    }

    #[test]
    fn every_byte_value_round_trips() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
    }

    #[test]
    fn rejects_characters_outside_the_alphabet() {
        assert_eq!(
            decode("Zm9v+g"),
            Err(Base64Error::BadCharacter { position: 4 })
        );
        assert_eq!(
            decode("Zm9v=="),
            Err(Base64Error::BadCharacter { position: 4 })
        );
    }

    #[test]
    fn rejects_a_dangling_character() {
        // 5 characters = one full group + 1 character holding only 6 bits: no byte.
        assert_eq!(decode("Zm9vY"), Err(Base64Error::BadLength));
    }

    #[test]
    fn rejects_stray_low_bits() {
        // "Zg" is 'f'; "Zh" differs only in bits that no byte uses.
        assert_eq!(decode("Zh"), Err(Base64Error::NonCanonical));
    }
}
