//! `paging::walk` against the vectors the page's walk.js is tested with too
//! (book/tests/paging-vectors.json), so the two cannot drift apart.

use pipebench::memory::paging::{self, PageSize, Paging};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../book/tests/paging-vectors.json"
    );
    let text = std::fs::read_to_string(path).expect("the shared paging vectors");
    let json: Value = serde_json::from_str(&text).expect("valid JSON");
    json["cases"].as_array().expect("a list of cases").clone()
}

#[test]
fn walks_match_the_shared_vectors() {
    let cases = vectors();
    assert!(cases.len() >= 10, "too few vectors: {}", cases.len());
    for case in cases {
        let input = case["input"].as_str().unwrap();
        let paging = Paging::from_levels(case["levels"].as_u64().unwrap() as u32).unwrap();
        let page = match case["page"].as_str().unwrap() {
            "4KiB" => PageSize::Small,
            "2MiB" => PageSize::Huge,
            other => panic!("unknown page size {other}"),
        };
        let walked = paging::parse_address(input).and_then(|a| paging::walk(a, paging, page));
        match (&walked, case.get("error").and_then(Value::as_str)) {
            (Err(err), Some(kind)) => {
                assert_eq!(err.kind(), kind, "{case}");
                // The refusal names what was given.
                let message = err.to_string();
                assert!(
                    message.contains(input.trim())
                        || message.contains(case["address"].as_str().unwrap_or("\u{0}")),
                    "{message}"
                );
            }
            (Ok(walk), None) => {
                assert_eq!(
                    format!("{:#018x}", walk.address),
                    case["address"].as_str().unwrap(),
                    "{case}"
                );
                let expected: Vec<(String, u64, u32)> = case["walk"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| {
                        (
                            l["name"].as_str().unwrap().to_string(),
                            l["index"].as_u64().unwrap(),
                            l["shift"].as_u64().unwrap() as u32,
                        )
                    })
                    .collect();
                let got: Vec<(String, u64, u32)> = walk
                    .levels
                    .iter()
                    .map(|l| (l.name.to_string(), l.index, l.shift))
                    .collect();
                assert_eq!(got, expected, "{case}");
                assert_eq!(walk.offset, case["offset"].as_u64().unwrap(), "{case}");
                assert_eq!(
                    u64::from(walk.offset_bits),
                    case["offset_bits"].as_u64().unwrap()
                );
            }
            (got, want) => panic!("{input}: got {got:?}, the vectors say {want:?}"),
        }
    }
}
