//! Durations, sizes and identities as written on the command line: `500ms`, `30s`, `10m`,
//! `12h`, `30d`; `4096`, `512KiB`, `1MiB`, `1GiB`; an identity's 64 hex digits.

use std::fmt;
use std::str::FromStr;
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

/// A size in bytes as a flag takes it ([`size`]) and shows it: in the largest unit that
/// writes it whole (`16MiB`, `512KiB`, `1000`), so that a default shown by `--help` reads as
/// one would type it, and parses back to itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes(pub usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(bytes) = *self;
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if bytes != 0 && bytes.is_multiple_of(1 << shift) {
                return write!(f, "{}{unit}", bytes >> shift);
            }
        }
        write!(f, "{bytes}")
    }
}

impl FromStr for Bytes {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        size(text).map(Self)
    }
}

/// A duration as a flag takes it ([`duration`]) and shows it: in the largest unit that writes
/// it whole (`30s`, `30d`, `1500ms`), to the millisecond (no flag takes less), so that a
/// default shown by `--help` reads as one would type it, and parses back to itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span(pub Duration);

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let millis = self.0.as_millis();
        for (per, unit) in [
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "m"),
            (1_000, "s"),
        ] {
            if millis != 0 && millis.is_multiple_of(per) {
                return write!(f, "{}{unit}", millis / per);
            }
        }
        write!(f, "{millis}ms")
    }
}

impl FromStr for Span {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        duration(text).map(Self)
    }
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
    fn sizes_and_durations_are_shown_as_written_and_read_back() {
        for (bytes, shown) in [
            (0, "0"),
            (1000, "1000"),
            (512 << 10, "512KiB"),
            (16 << 20, "16MiB"),
            (3 << 30, "3GiB"),
            ((1 << 20) + 1, "1048577"),
        ] {
            assert_eq!(Bytes(bytes).to_string(), shown);
            assert_eq!(shown.parse(), Ok(Bytes(bytes)));
        }
        for (millis, shown) in [
            (0, "0ms"),
            (1_500, "1500ms"),
            (30_000, "30s"),
            (600_000, "10m"),
            (43_200_000, "12h"),
            (30 * 86_400_000, "30d"),
        ] {
            let span = Span(Duration::from_millis(millis));
            assert_eq!(span.to_string(), shown);
            assert_eq!(shown.parse(), Ok(span));
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
