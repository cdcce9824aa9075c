//! Byte sizes as people write them: `256KiB`, `10GiB`, `4096`, `1.5MiB`.
//!
//! Binary units (KiB, MiB, GiB) are powers of 1024, decimal units (kB, MB, GB)
//! powers of 1000, and a plain number is bytes. The article and `pv` both speak
//! binary units, so that is what [`ByteSize`] prints.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A number of bytes that parses from and prints as a human size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

/// One KiB (2^10 bytes).
pub(crate) const KIB: u64 = 1 << 10;
/// One MiB (2^20 bytes).
pub const MIB: u64 = 1 << 20;
/// One GiB (2^30 bytes), the unit behind every GiB/s in the book.
pub const GIB: u64 = 1 << 30;

/// Why a size string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Nothing was given.
    #[error("empty size: give a number of bytes or a size such as 256KiB")]
    Empty,
    /// The numeric part could not be read.
    #[error("`{0}` is not a size: expected a number with an optional unit (B, KiB, MiB, GiB, kB, MB, GB)")]
    BadNumber(String),
    /// The unit is not one we know.
    #[error("unknown unit `{unit}` in `{input}`: use B, KiB, MiB, GiB, TiB (or kB, MB, GB)")]
    BadUnit {
        /// The whole input.
        input: String,
        /// The unit that was not recognised.
        unit: String,
    },
    /// The value does not fit in 64 bits or is not a whole number of bytes.
    #[error("`{0}` is out of range (sizes are whole bytes up to 16 EiB)")]
    OutOfRange(String),
}

impl ByteSize {
    /// The number of bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }

    /// The size as a `usize`, for buffer lengths.
    pub(crate) fn as_usize(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl FromStr for ByteSize {
    type Err = SizeError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(SizeError::Empty);
        }
        let split = trimmed
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let number: String = number.chars().filter(|&c| c != '_').collect();
        if number.is_empty() {
            return Err(SizeError::BadNumber(input.to_string()));
        }
        let multiplier = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" | "ki" => KIB,
            "m" | "mib" | "mi" => MIB,
            "g" | "gib" | "gi" => GIB,
            "t" | "tib" | "ti" => GIB * KIB,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            _ => {
                return Err(SizeError::BadUnit {
                    input: input.to_string(),
                    unit: unit.trim().to_string(),
                })
            }
        };
        if let Ok(whole) = number.parse::<u64>() {
            return whole
                .checked_mul(multiplier)
                .map(ByteSize)
                .ok_or_else(|| SizeError::OutOfRange(input.to_string()));
        }
        let value: f64 = number
            .parse()
            .map_err(|_| SizeError::BadNumber(input.to_string()))?;
        let bytes = value * multiplier as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes >= u64::MAX as f64 || bytes.fract() != 0.0 {
            return Err(SizeError::OutOfRange(input.to_string()));
        }
        Ok(ByteSize(bytes as u64))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(GIB * KIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
        for (size, name) in units {
            if self.0 >= size && self.0.is_multiple_of(size) {
                return write!(f, "{}{}", self.0 / size, name);
            }
        }
        for (size, name) in units {
            if self.0 >= size {
                return write!(f, "{:.2}{}", self.0 as f64 / size as f64, name);
            }
        }
        write!(f, "{}B", self.0)
    }
}

impl ByteSize {
    /// The exact value for a message: `4095 bytes (3.999KiB)`, `262144 bytes (256KiB)`.
    /// Display alone rounds (4095 shows as `4.00KiB`), which misstates a refused value.
    pub fn exact(&self) -> String {
        let units = [(GIB * KIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
        let human = units
            .iter()
            .find(|(size, _)| self.0 >= *size)
            .map(|&(size, name)| {
                if self.0.is_multiple_of(size) {
                    format!("{}{name}", self.0 / size)
                } else {
                    // Three decimals keep 4095 and 4097 apart from 4 KiB.
                    format!("{:.3}{name}", self.0 as f64 / size as f64)
                }
            });
        match human {
            Some(human) => format!("{} bytes ({human})", self.0),
            None => format!("{} bytes", self.0),
        }
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    /// Accepts a number of bytes or a size string, as the WebSocket protocol allows.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom("expected a number of bytes or a size such as \"1GiB\"")
        })? {
            Raw::Number(n) => Ok(ByteSize(n)),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// GiB/s for `bytes` in `elapsed_ms`.
pub fn gib_per_s(bytes: u64, elapsed_ms: f64) -> f64 {
    if elapsed_ms <= 0.0 {
        return 0.0;
    }
    bytes as f64 / GIB as f64 / (elapsed_ms / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gib_per_s_uses_binary_gigabytes() {
        assert!((gib_per_s(GIB, 1000.0) - 1.0).abs() < 1e-12);
        assert!((gib_per_s(10 * GIB, 2000.0) - 5.0).abs() < 1e-12);
        assert_eq!(gib_per_s(GIB, 0.0), 0.0);
    }

    #[test]
    fn exact_never_rounds_a_value_onto_its_neighbour() {
        assert_eq!(ByteSize(4095).exact(), "4095 bytes (3.999KiB)");
        assert_eq!(ByteSize(4097).exact(), "4097 bytes (4.001KiB)");
        assert_eq!(ByteSize(256 << 10).exact(), "262144 bytes (256KiB)");
        assert_eq!(ByteSize(12).exact(), "12 bytes");
    }

    #[test]
    fn parses_plain_bytes_and_units() {
        assert_eq!("4096".parse(), Ok(ByteSize(4096)));
        assert_eq!("256KiB".parse(), Ok(ByteSize(256 * KIB)));
        assert_eq!("10GiB".parse(), Ok(ByteSize(10 * GIB)));
        assert_eq!("10 GiB".parse(), Ok(ByteSize(10 * GIB)));
        assert_eq!("1.5MiB".parse(), Ok(ByteSize(3 * MIB / 2)));
        assert_eq!("2m".parse(), Ok(ByteSize(2 * MIB)));
        assert_eq!("1kB".parse(), Ok(ByteSize(1000)));
        assert_eq!("1_048_576".parse(), Ok(ByteSize(MIB)));
    }

    #[test]
    fn refuses_nonsense_with_reasons() {
        assert_eq!("".parse::<ByteSize>(), Err(SizeError::Empty));
        assert!(matches!(
            "abc".parse::<ByteSize>(),
            Err(SizeError::BadNumber(_))
        ));
        assert!(matches!(
            "-5".parse::<ByteSize>(),
            Err(SizeError::BadNumber(_))
        ));
        assert!(matches!(
            "5 parsecs".parse::<ByteSize>(),
            Err(SizeError::BadUnit { .. })
        ));
        assert!(matches!(
            "99999999999TiB".parse::<ByteSize>(),
            Err(SizeError::OutOfRange(_))
        ));
        assert!(matches!(
            "0.3B".parse::<ByteSize>(),
            Err(SizeError::OutOfRange(_))
        ));
        let message = "5 parsecs".parse::<ByteSize>().unwrap_err().to_string();
        assert!(message.contains("parsecs"), "{message}");
    }

    #[test]
    fn prints_in_binary_units() {
        assert_eq!(ByteSize(256 * KIB).to_string(), "256KiB");
        assert_eq!(ByteSize(10 * GIB).to_string(), "10GiB");
        assert_eq!(ByteSize(1000).to_string(), "1000B");
        assert_eq!(ByteSize(3 * MIB / 2).to_string(), "1536KiB");
        assert_eq!(ByteSize(MIB + 1).to_string(), "1.00MiB");
    }

    #[test]
    fn deserializes_numbers_and_strings() {
        let n: ByteSize = serde_json::from_str("1024").unwrap();
        let s: ByteSize = serde_json::from_str("\"1GiB\"").unwrap();
        assert_eq!((n, s), (ByteSize(1024), ByteSize(GIB)));
        let bad = serde_json::from_str::<ByteSize>("\"lots\"").unwrap_err();
        assert!(bad.to_string().contains("lots"), "{bad}");
        assert!(serde_json::from_str::<ByteSize>("true").is_err());
    }
}
