//! A student's report must mean one thing to every reader: JSON with a key
//! twice in one object (serde_json keeps the last, other readers the first)
//! or nested past any real report's depth is refused before it is read,
//! with the place it went wrong.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// Deepest nesting of arrays and objects a report may have (a real one is
/// under 10 deep; serde_json itself stops at 128).
pub(crate) const MAX_DEPTH: usize = 32;

/// Checks `text` (JSON) for duplicate keys and nesting past [`MAX_DEPTH`]; the
/// error says which, with serde_json's line and column.
pub(crate) fn check(text: &[u8]) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    JsonWalk { depth: 0 }.deserialize(&mut deserializer)?;
    deserializer.end()
}

/// One value, `depth` levels down.
#[derive(Clone, Copy)]
struct JsonWalk {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for JsonWalk {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl JsonWalk {
    fn deeper<E: serde::de::Error>(self) -> Result<JsonWalk, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(format!(
                "nested more than {MAX_DEPTH} levels deep, deeper than any lab report"
            )));
        }
        Ok(JsonWalk {
            depth: self.depth + 1,
        })
    }
}

impl<'de> Visitor<'de> for JsonWalk {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        match v.is_finite() {
            true => Ok(()),
            false => Err(E::custom("a number too large for a 64-bit float")),
        }
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.deeper()?;
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            // The key itself is not quoted (it may be hostile text): serde_json
            // adds the line and column.
            if !keys.insert(key) {
                return Err(A::Error::custom(
                    "a key appears twice in one object: readers would disagree on its value",
                ));
            }
            map.next_value_seed(inner)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_and_deep_nesting_are_refused_with_where() {
        assert!(check(br#"{"a":1,"b":[1,2,{"c":null}]}"#).is_ok());
        let twice = check(br#"{"a":1,"b":{"x":1,"x":2}}"#).unwrap_err();
        assert!(twice.to_string().contains("appears twice"), "{twice}");
        assert!(twice.to_string().contains("column"), "{twice}");
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let err = check(deep.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("levels deep"), "{err}");
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(check(ok.as_bytes()).is_ok());
        // A million brackets: refused at the limit, no stack overflow.
        let huge = "[".repeat(1 << 20);
        assert!(check(huge.as_bytes()).is_err());
        assert!(check(b"[1e400]").is_err());
        assert!(check(b"{} trailing").is_err());
    }
}
