//! Property tests: UCI and SAN round-trip for every legal move of positions
//! reached by random play, SAN is unique per position and marks check and
//! mate exactly, and PGN export reads back as the same game, with its
//! clocks, NAGs and comments.

use chess_rules::pgn::{PgnGame, PlyAnnotation};
use chess_rules::{GameRecord, Position, San, UciMove};
use proptest::prelude::*;

/// Start positions with castling, en passant, promotions and pins to come.
const STARTS: [&str; 5] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Kiwipete.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    // Chess programming wiki perft position 3: en passant and pins.
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    // Promotions for both sides, with knights to capture.
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    // Chess programming wiki perft position 4.
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
];

/// Checks every text property for every legal move of `position`.
fn check_position(position: &Position) -> Result<(), TestCaseError> {
    let legal = position.legal_moves();
    let mut sans = Vec::with_capacity(legal.len());
    for m in legal.iter() {
        let uci = m.to_uci().to_string();
        let parsed: UciMove = uci
            .parse()
            .map_err(|e| TestCaseError::fail(format!("{uci}: {e}")))?;
        prop_assert_eq!(
            parsed.to_move(position),
            Ok(*m),
            "{} {}",
            position.fen(),
            uci
        );
        prop_assert_eq!(position.parse_uci(&uci), Ok(*m));

        let san = position.san(m);
        prop_assert_eq!(
            position.parse_san(&san),
            Ok(*m),
            "{} {}",
            position.fen(),
            san
        );
        let bare = San::from_move(position, m);
        prop_assert_eq!(san.trim_end_matches(['+', '#']).parse::<San>(), Ok(bare));

        let after = position
            .play(m)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(san.ends_with('#'), after.is_checkmate(), "{}", san);
        prop_assert_eq!(
            san.ends_with('+'),
            after.is_check() && !after.is_checkmate(),
            "{}",
            san
        );
        sans.push(san);
    }
    sans.sort();
    let count = sans.len();
    sans.dedup();
    prop_assert_eq!(
        sans.len(),
        count,
        "two moves share a SAN in {}",
        position.fen()
    );
    Ok(())
}

/// Comment text as import keeps it: words of text without `%` (so no
/// `[%clk]` command) but with braces, parentheses and `;`, joined by one
/// space; none when there is no word.
fn comment() -> impl Strategy<Value = Option<String>> {
    "[a-z{}();\\[\\] \n]{0,24}".prop_map(|text| {
        let words: Vec<&str> = text.split_whitespace().collect();
        (!words.is_empty()).then(|| words.join(" "))
    })
}

/// A ply's annotation as export writes it: clocks to the second, each NAG once.
fn annotation() -> impl Strategy<Value = PlyAnnotation> {
    (
        prop::option::of(0u64..200_000),
        prop::collection::hash_set(any::<u8>(), 0..3),
        comment(),
    )
        .prop_map(|(seconds, nags, comment)| PlyAnnotation {
            clock_ms: seconds.map(|s| s * 1000),
            nags: nags.into_iter().collect(),
            comment,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn uci_and_san_round_trip_along_random_games(
        start in 0..STARTS.len(),
        choices in prop::collection::vec(any::<u32>(), 0..80),
        game_comment in comment(),
        annotations in prop::collection::vec(annotation(), 0..80),
    ) {
        let initial = Position::from_fen(STARTS[start]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut record = GameRecord::new(initial);
        check_position(record.position())?;
        for choice in choices {
            let legal = record.position().legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[choice as usize % legal.len()];
            record.push(m).map_err(|e| TestCaseError::fail(e.to_string()))?;
            check_position(record.position())?;
        }

        let text = PgnGame::from_record(record.clone()).to_pgn();
        let again: PgnGame = text.parse().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&again.record, &record, "{}", text);
        prop_assert!(text.lines().all(|line| line.len() <= 80));

        // With a comment before the moves and annotations on some plies.
        let mut game = PgnGame::from_record(record.clone());
        game.comment = game_comment;
        game.annotations = annotations;
        game.annotations.truncate(record.len());
        while game.annotations.last().is_some_and(PlyAnnotation::is_empty) {
            game.annotations.pop();
        }
        let text = game.to_pgn();
        prop_assert!(text.lines().all(|line| line.len() <= 80), "{}", text);
        let again: PgnGame = text.parse().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&again.record, &game.record, "{}", text);
        prop_assert_eq!(&again.comment, &game.comment, "{}", text);
        prop_assert_eq!(&again.annotations, &game.annotations, "{}", text);
        prop_assert_eq!(again.to_pgn(), text);
    }
}
