//! Durations, sizes and identities as written on the command line: `500ms`, `30s`, `10m`,
//! `12h`, `30d`; `4096`, `512KiB`, `1MiB`, `1GiB`; an identity's 64 hex digits.

use std::time::Duration;
use wasmod_abi::Identity;

/// Parses a duration: a whole number followed by `ms`, `s`, `m`, `h` or `d`.
pub fn duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = split(text);
    let millis_per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => {
            return Err(format!(
                "`{text}` is not a duration: write a number and a unit, such as 500ms, 30s, 10m, 12h or 30d"
            ))
        }
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: `{number}` is not a whole number"))?;
    number
        .checked_mul(millis_per_unit)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("`{text}` is too long"))
}

/// Parses a size in bytes: a whole number, optionally followed by `B`, `KiB`, `MiB` or `GiB`.
pub fn size(text: &str) -> Result<usize, String> {
    let (number, unit) = split(text);
    let shift = match unit {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => {
            return Err(format!(
                "`{text}` is not a size: write a number of bytes, or a number and KiB, MiB or GiB"
            ))
        }
    };
    let number: usize = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size: `{number}` is not a whole number"))?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Parses an identity: its 64 hex digits, in either case.
pub fn identity(text: &str) -> Result<Identity, String> {
    Identity::from_hex(text.trim())
        .ok_or_else(|| format!("`{text}` is not an identity: write its 64 hex digits"))
}

/// Splits `text` into its leading digits and the rest.
fn split(text: &str) -> (&str, &str) {
    let text = text.trim();
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        for bad in [
            "",
            "10",
            "s",
            "1.5s",
            "-1s",
            "10 years",
            "99999999999999999999d",
        ] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("512KiB"), Ok(512 << 10));
        assert_eq!(size("1MiB"), Ok(1 << 20));
        for bad in ["", "MiB", "1MB", "1.5MiB", "-1"] {
            assert!(size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn identities() {
        let hex = "AB".repeat(32);
        assert_eq!(identity(&hex), Ok(Identity::from_bytes([0xab; 32])));
        for bad in ["", "ab", &"ab".repeat(33), &"zz".repeat(32)] {
            assert!(identity(bad).is_err(), "{bad}");
        }
    }
}
