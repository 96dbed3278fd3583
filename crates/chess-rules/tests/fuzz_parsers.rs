//! Fuzzing on stable: every text parser of the rules crate (FEN, UCI, SAN,
//! PGN, squares) gets arbitrary text and mutations of valid text. None may
//! panic; whatever one accepts must be consistent (it writes back to text
//! that parses to the same thing, and a parsed move is legal).
//!
//! CI runs proptest's default number of cases per target; the long run sets
//! `PROPTEST_CASES` (see docs/reliability.md):
//!
//! ```sh
//! PROPTEST_CASES=1000000 cargo test --release -p chess-rules --test fuzz_parsers
//! ```

use chess_rules::pgn::{PgnGame, read_games};
use chess_rules::{Position, San, Square, UciMove};
use proptest::prelude::*;

/// Valid FENs to mutate: castling, en passant, promotions, check.
const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
];

/// Valid UCI and SAN move texts to mutate.
const MOVES: &[&str] = &[
    "e2e4", "e7e8q", "e1g1", "a7b8n", "0000", "e4", "Nf3", "exd5", "O-O", "O-O-O+", "e8=Q#",
    "Nbd7", "R1a3", "Qh4xe1", "bxa8=N",
];

/// A valid PGN to mutate: tags, comments, variations, NAGs, a result.
const PGN: &str = r#"[Event "Casual"]
[Site "?"]
[Date "2026.11.30"]
[Round "-"]
[White "a"]
[Black "b"]
[Result "1-0"]

1. e4 {[%clk 0:02:58.4]} e5 2. Nf3 (2. f4 exf4) Nc6 $1 3. Bb5 a6 4. Ba4 Nf6
5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 1-0

[FEN "4k3/P7/8/8/8/8/8/4K3 w - - 0 1"]
[SetUp "1"]

1. a8=Q+ Kd7 *
"#;

/// Text from `seeds` with up to eight random edits: a character inserted,
/// removed or replaced, a slice repeated, the end cut off.
fn mutated(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        0..seeds.len(),
        prop::collection::vec((0u8..5, any::<usize>(), any::<char>()), 0..8),
    )
        .prop_map(move |(seed, edits)| {
            let mut chars: Vec<char> = seeds[seed].chars().collect();
            for (op, at, c) in edits {
                let at = if chars.is_empty() {
                    0
                } else {
                    at % chars.len()
                };
                match op {
                    0 => chars.insert(at, c),
                    1 if !chars.is_empty() => {
                        chars.remove(at);
                    }
                    2 if !chars.is_empty() => chars[at] = c,
                    3 => {
                        let slice: Vec<char> = chars[at..].iter().take(6).copied().collect();
                        for (i, c) in slice.into_iter().enumerate() {
                            chars.insert(at + i, c);
                        }
                    }
                    _ => chars.truncate(at),
                }
            }
            chars.into_iter().collect()
        })
}

/// Arbitrary text, chess-flavoured text, or a mutation of a valid seed.
fn text(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-hKQRBNPkqrbnpx0-9=+#/ O-]{0,40}",
        mutated(seeds),
    ]
}

fn positions() -> Vec<Position> {
    FENS.iter()
        .map(|fen| Position::from_fen(fen).expect("a valid FEN"))
        .collect()
}

proptest! {
    #[test]
    fn fen_never_panics_and_what_it_accepts_round_trips(text in text(FENS)) {
        if let Ok(position) = Position::from_fen(&text) {
            let written = position.fen();
            let again = Position::from_fen(&written);
            prop_assert!(again.is_ok(), "{text:?} -> {written:?}: {again:?}");
            prop_assert_eq!(again.map(|p| p.fen()).ok(), Some(written));
        }
        let _ = Position::from_fen_lenient(&text);
        let _ = text.parse::<Position>();
    }

    #[test]
    fn uci_never_panics_and_parsed_moves_are_legal(text in text(MOVES), which in 0..FENS.len()) {
        if let Ok(parsed) = text.parse::<UciMove>() {
            let written = parsed.to_string();
            prop_assert_eq!(written.parse::<UciMove>().ok(), Some(parsed), "{}", text);
        }
        let position = &positions()[which];
        if let Ok(mv) = position.parse_uci(&text) {
            prop_assert!(position.legal_moves().contains(&mv), "{text:?} in {}", position.fen());
        }
    }

    #[test]
    fn san_never_panics_and_parsed_moves_are_legal(text in text(MOVES), which in 0..FENS.len()) {
        if let Ok(san) = text.parse::<San>() {
            let written = san.to_string();
            prop_assert_eq!(written.parse::<San>().ok(), Some(san), "{}", text);
        }
        let position = &positions()[which];
        if let Ok(mv) = position.parse_san(&text) {
            prop_assert!(position.legal_moves().contains(&mv), "{text:?} in {}", position.fen());
            prop_assert_eq!(position.parse_san(&position.san(&mv)).ok(), Some(mv));
        }
    }

    #[test]
    fn pgn_never_panics_and_what_it_accepts_round_trips(text in text(&[PGN])) {
        let _ = read_games(&text);
        if let Ok(game) = text.parse::<PgnGame>() {
            let written = game.to_pgn();
            let again = written.parse::<PgnGame>();
            prop_assert!(again.is_ok(), "{text:?} -> {written:?}: {again:?}");
            prop_assert_eq!(again.map(|g| g.record).ok(), Some(game.record));
        }
    }

    #[test]
    fn squares_never_panic(text in text(MOVES)) {
        if let Ok(square) = text.parse::<Square>() {
            prop_assert_eq!(square.to_string().parse::<Square>().ok(), Some(square));
        }
    }
}
