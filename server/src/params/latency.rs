//! The latency lab's parameters from the page: a `latency` message's fields,
//! the server's bounds (at most 100 000 round trips, so a click never holds
//! the queue for long) and the engine's [`LatencyConfig`] they become. Apart
//! from the kind ([`super`]) because the labs read them too.

use pipebench::latency::{self, LatencyConfig, LatencyError, LatencyMechanism, Mode};
use pipebench::size::ByteSize;
use serde::Deserialize;

/// Round trips a page's run times unless it says otherwise.
pub(crate) const PAGE_ROUND_TRIPS: u32 = 5_000;
/// The most round trips a page may ask for.
pub(crate) const PAGE_MAX_ROUND_TRIPS: u32 = 100_000;

/// Round trips the latency matrix card starts with for each configuration: it
/// times every mechanism in both modes one after another.
pub(crate) const MATRIX_ROUND_TRIPS: u32 = 2_000;

/// `{"type":"latency","mechanism":ID,"mode":"blocking"|"busy","size":64,
/// "cpus":[A,B],"round_trips":N}`; only `mechanism` is required (the
/// message's `lab` tag is [`super::LatencyMessage`]'s).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LatencyRunParams {
    /// LatencyMechanism id.
    pub(crate) mechanism: String,
    /// `blocking` (default) or `busy`.
    #[serde(default)]
    pub(crate) mode: Option<Mode>,
    /// Bytes per message (default 64), a number or a string like "4KiB".
    #[serde(default)]
    pub(crate) size: Option<ByteSize>,
    /// The ping end's CPU and the pong end's (default: the pipe steps' two).
    #[serde(default, deserialize_with = "two_cpus")]
    pub(crate) cpus: Option<[usize; 2]>,
    /// Round trips to time.
    #[serde(default)]
    pub(crate) round_trips: Option<u32>,
}

/// `cpus` as exactly two CPU numbers; anything else is refused naming the field
/// and what came (serde's own words for a wrong-length array name neither).
pub(crate) fn two_cpus<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<[usize; 2]>, D::Error> {
    let cpus: Option<Vec<usize>> = Deserialize::deserialize(deserializer).map_err(|e| {
        serde::de::Error::custom(format!("`cpus` must be two CPU numbers [ping, pong]: {e}"))
    })?;
    match cpus.as_deref() {
        None => Ok(None),
        Some(&[ping, pong]) => Ok(Some([ping, pong])),
        Some(other) => Err(serde::de::Error::custom(format!(
            "`cpus` must be two CPU numbers [ping, pong], not {other:?}"
        ))),
    }
}

/// Checks a page's request into the engine's configuration.
pub(crate) fn plan(params: &LatencyRunParams) -> Result<LatencyConfig, LatencyError> {
    let round_trips = params.round_trips.unwrap_or(PAGE_ROUND_TRIPS);
    if round_trips > PAGE_MAX_ROUND_TRIPS {
        return Err(LatencyError::BadRoundTrips { round_trips });
    }
    let config = LatencyConfig {
        mechanism: LatencyMechanism::parse(&params.mechanism)?,
        mode: params.mode.unwrap_or(Mode::Blocking),
        size: params.size.map_or(64, |s| s.bytes()),
        cpus: params.cpus.unwrap_or_else(latency::default_cpus),
        round_trips,
    };
    config.check()?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<LatencyConfig, String> {
        let params: LatencyRunParams = serde_json::from_str(json).map_err(|e| e.to_string())?;
        plan(&params).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_fill_in_and_bounds_hold() {
        let config = parse(r#"{"mechanism":"pipe"}"#).unwrap();
        assert_eq!(
            (config.mode, config.size, config.round_trips),
            (Mode::Blocking, 64, PAGE_ROUND_TRIPS)
        );
        assert_eq!(
            parse(r#"{"mechanism":"tcp","size":"4KiB","mode":"busy"}"#)
                .unwrap()
                .size,
            4096
        );
        assert!(parse(r#"{"mechanism":"pipe","round_trips":1000000}"#).is_err());
        assert!(parse(r#"{"mechanism":"pipe","size":0}"#).is_err());
        assert!(parse(r#"{"mechanism":"shm-ring","mode":"blocking"}"#).is_err());
        assert!(parse(r#"{"mechanism":"pipe","cpus":[0,4096]}"#).is_err());
        assert!(parse(r#"{"mechanism":"pipe","bytes":1}"#).is_err());
        let three = parse(r#"{"mechanism":"pipe","cpus":[0,1,2]}"#).unwrap_err();
        assert!(
            three.contains("`cpus`") && three.contains("[0, 1, 2]"),
            "{three}"
        );
        assert_eq!(
            parse(r#"{"mechanism":"pipe","cpus":[1,0]}"#).unwrap().cpus,
            [1, 0]
        );
        assert!(parse(r#"{"mechanism":"nope"}"#).is_err());
    }
}
