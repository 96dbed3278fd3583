//! Perft against published node counts (`tests/data/perft.txt`, which
//! names its sources).

use chess_rules::{Position, perft};

/// One position of the data file with its expected counts by depth.
struct Case {
    id: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

fn parse_cases(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for block in text.split("\n\n") {
        let mut id = None;
        let mut fen = None;
        let mut counts = Vec::new();
        for line in block.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line
                .split_once(' ')
                .unwrap_or_else(|| panic!("malformed line {line:?}"));
            match key {
                "id" => id = Some(value.to_owned()),
                "epd" => fen = Some(value.to_owned()),
                "perft" => {
                    let (depth, nodes) = value
                        .split_once(' ')
                        .unwrap_or_else(|| panic!("malformed perft line {line:?}"));
                    counts.push((depth.parse().unwrap(), nodes.parse().unwrap()));
                }
                _ => panic!("unknown key in line {line:?}"),
            }
        }
        if let (Some(id), Some(fen)) = (id, fen) {
            assert!(!counts.is_empty(), "{id} has no perft lines");
            cases.push(Case { id, fen, counts });
        }
    }
    cases
}

#[test]
fn perft_matches_published_counts() {
    let cases = parse_cases(include_str!("data/perft.txt"));
    assert!(cases.len() >= 6, "only {} cases read", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let pos = Position::from_fen_lenient(&case.fen)
            .unwrap_or_else(|err| panic!("{}: bad fen {:?}: {err}", case.id, case.fen));
        for &(depth, expected) in &case.counts {
            let nodes = perft(&pos, depth);
            if nodes != expected {
                failures.push(format!(
                    "{} depth {depth}: expected {expected}, got {nodes}",
                    case.id
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "perft mismatches:\n{}",
        failures.join("\n")
    );
}
