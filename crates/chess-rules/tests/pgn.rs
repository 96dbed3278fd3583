//! PGN import of real games played through to their final positions,
//! export (tags, move numbers, clocks, wrapping) and the exact error for
//! each kind of bad input.
//!
//! The final positions were computed independently with python-chess 1.11.

use chess_rules::pgn::{PgnError, PgnGame, PgnResult, read_games};
use chess_rules::{GameRecord, Position, SanError};

const FAMOUS: &str = include_str!("data/famous.pgn");
const NEPOMNIACHTCHI_DING: &str = include_str!("data/nepomniachtchi-liren-game1.pgn");
const ANNOTATED: &str = include_str!("data/annotated.pgn");

const OPERA_FINAL: &str = "1n1Rkb1r/p4ppp/4q3/4p1B1/4P3/8/PPP2PPP/2K5 b k - 1 17";

fn record_of(sans: &str) -> GameRecord {
    let mut record = GameRecord::default();
    for san in sans.split_whitespace() {
        record
            .push_san(san)
            .unwrap_or_else(|err| panic!("{san}: {err}"));
    }
    record
}

#[test]
fn famous_games_play_through_to_their_final_positions() {
    let games = read_games(FAMOUS).expect("famous games");
    let expected = [
        (
            "Garry Kasparov",
            87,
            "8/Q6p/6p1/5p2/5P2/2p3P1/3r3P/2K1k3 b - - 3 44",
        ),
        ("Paul Morphy", 33, OPERA_FINAL),
        (
            "Robert James Fischer",
            81,
            "4q2k/2r1r3/4PR1p/p1p5/P1Bp1Q1P/1P6/6P1/6K1 b - - 4 41",
        ),
    ];
    assert_eq!(games.len(), expected.len());
    for (game, (white, plies, fen)) in games.iter().zip(expected) {
        assert_eq!(game.tag("White"), Some(white));
        assert_eq!(game.record.len(), plies, "{white}");
        assert_eq!(game.record.position().fen(), fen, "{white}");
        assert_eq!(game.result, PgnResult::WhiteWins, "{white}");
        assert!(game.clocks.is_empty());
    }
    assert!(games[1].record.position().is_checkmate());
}

#[test]
fn a_world_championship_game_reads_with_its_tags() {
    let game: PgnGame = NEPOMNIACHTCHI_DING.parse().expect("one game");
    assert_eq!(game.record.len(), 97);
    assert_eq!(
        game.record.position().fen(),
        "8/3b1kp1/5p2/1p5p/1BpN1P1P/P1P1K1P1/8/2n5 b - - 2 49"
    );
    assert_eq!(game.result, PgnResult::Draw);
    assert_eq!(game.tag("TimeControl"), Some("40/7200:20/3600:900+30"));
    assert_eq!(game.tag("BlackElo"), Some("2788"));
    assert_eq!(game.tags.len(), 12);
}

#[test]
fn comments_nags_variations_and_clocks_are_read() {
    let game: PgnGame = ANNOTATED.parse().expect("annotated game");
    assert_eq!(game.record.len(), 33);
    assert_eq!(game.record.position().fen(), OPERA_FINAL);
    assert_eq!(game.result, PgnResult::WhiteWins);
    assert_eq!(
        game.tag("Annotator"),
        Some(r#"A "quoted" name \ and a backslash"#)
    );
    assert_eq!(game.clocks.len(), 33);
    assert_eq!(&game.clocks[..4], [300_000, 300_000, 298_000, 297_000]);
    assert_eq!(game.clocks[32], 263_000);
    // The annotations are gone from the SAN kept in the record.
    assert_eq!(game.record.plies()[5].san, "Bg4");
    assert_eq!(game.record.plies()[18].san, "Nxb5");
}

#[test]
fn exports_tags_move_numbers_and_clocks() {
    let mut game = PgnGame::new(Position::startpos());
    game.record = record_of("f3 e5 g4 Qh4#");
    game.result = PgnResult::BlackWins;
    game.clocks = vec![300_000, 299_999, 298_000, 297_400];
    game.set_tag("Opening", "Fool's mate");
    game.set_tag("White", "Alice");
    game.set_tag("Termination", "Normal");
    game.set_tag("Black", "Bob \"the\" Builder");
    game.set_tag("TimeControl", "300+3");
    game.set_tag("Event", "Casual game");
    let expected = r#"[Event "Casual game"]
[Site "?"]
[Date "????.??.??"]
[Round "?"]
[White "Alice"]
[Black "Bob \"the\" Builder"]
[Result "0-1"]
[TimeControl "300+3"]
[Termination "Normal"]
[Opening "Fool's mate"]

1. f3 { [%clk 0:05:00] } 1... e5 { [%clk 0:04:59] } 2. g4 { [%clk 0:04:58] }
2... Qh4# { [%clk 0:04:57] } 0-1

"#;
    assert_eq!(game.to_pgn(), expected);

    // It reads back as the same game, with clocks to the second, and
    // writes the same text again.
    let again: PgnGame = expected.parse().expect("exported pgn");
    assert_eq!(again.record, game.record);
    assert_eq!(again.result, game.result);
    assert_eq!(again.clocks, [300_000, 299_000, 298_000, 297_000]);
    assert_eq!(again.tag("Black"), Some("Bob \"the\" Builder"));
    assert_eq!(again.to_pgn(), expected);
}

#[test]
fn exports_a_set_up_position_with_black_to_move() {
    let initial = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 0 12").expect("fen");
    let mut game = PgnGame::new(initial);
    for san in ["Kd7", "e4", "Kc6"] {
        game.record.push_san(san).expect(san);
    }
    let expected = r#"[Event "?"]
[Site "?"]
[Date "????.??.??"]
[Round "?"]
[White "?"]
[Black "?"]
[Result "*"]
[SetUp "1"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 0 12"]

12... Kd7 13. e4 Kc6 *

"#;
    assert_eq!(game.to_pgn(), expected);
    let again: PgnGame = expected.parse().expect("exported pgn");
    assert_eq!(again.record, game.record);
    assert_eq!(again.tag("FEN"), Some("4k3/8/8/8/8/8/4P3/4K3 b - - 0 12"));
}

#[test]
fn long_games_wrap_at_80_columns_and_round_trip() {
    for game in read_games(FAMOUS).expect("famous games") {
        let text = game.to_pgn();
        assert!(text.lines().all(|line| line.len() <= 80), "{text}");
        // Wrapping uses the room: some line is close to full.
        assert!(text.lines().any(|line| line.len() >= 75), "{text}");
        let again: PgnGame = text.parse().expect("exported pgn");
        assert_eq!(again.record, game.record);
        assert_eq!(again.to_pgn(), text);
    }
}

#[test]
fn lenient_movetext_forms_are_read() {
    let cases = [
        ("1.e4 e5 2.Nf3 2...Nc6 3 Bb5 *", 5),
        ("1. e4 1... e5 2. Nf3 . Nc6 *", 4),
        ("\u{feff}[Event \"A\"]\r\n\r\n1. e4 e5 *\r\n", 2),
        ("1. e4 $1 e5 $2 2. Nf3!? Nc6?! 3. Bc4 Nf6 4. 0-0 $10 *", 7),
        ("1. e4 e5 2. Ke2!? Ke7?? 3. Ke1 Ke8 1/2-1/2", 6),
        ("[White \"x\"]\n\n*", 0),
    ];
    for (text, plies) in cases {
        let game: PgnGame = text.parse().unwrap_or_else(|err| panic!("{text:?}: {err}"));
        assert_eq!(game.record.len(), plies, "{text:?}");
    }
}

#[test]
fn results_come_from_movetext_or_else_the_tag() {
    let game: PgnGame = "[Result \"1-0\"]\n\n1. e4 e5"
        .parse()
        .expect("no result token");
    assert_eq!(game.result, PgnResult::WhiteWins);
    let game: PgnGame = "[Result \"1-0\"]\n\n1. e4 e5 1/2-1/2"
        .parse()
        .expect("result");
    assert_eq!(game.result, PgnResult::Draw);
    let game: PgnGame = "1. e4 e5".parse().expect("no result at all");
    assert_eq!(game.result, PgnResult::Unknown);
}

#[test]
fn games_without_results_are_split_at_the_next_tags() {
    let games =
        read_games("[White \"a\"]\n\n1. e4\n\n[White \"b\"]\n\n1. d4 d5 *\n").expect("two games");
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].tag("White"), Some("a"));
    assert_eq!(games[0].record.len(), 1);
    assert_eq!(games[1].tag("White"), Some("b"));
    assert_eq!(games[1].record.len(), 2);
    // Movetext after a result without tags is a game of its own.
    assert_eq!(read_games("1. e4 * 1. d4 *").expect("two games").len(), 2);
}

#[test]
fn clocks_are_kept_only_when_every_move_has_one() {
    let game: PgnGame = "1. e4 { [%clk 0:01:00] } e5 *".parse().expect("game");
    assert!(game.clocks.is_empty());
    let game: PgnGame = "1. e4 { [%clk 0:01:00] } e5 { [%eval 0.2] [%clk 0:00:59.5] } *"
        .parse()
        .expect("game");
    assert_eq!(game.clocks, [60_000, 59_500]);
}

#[test]
fn bad_pgn_fails_with_an_exact_error() {
    let cases = [
        ("", PgnError::NoGame),
        ("  \n% only an escape line\n", PgnError::NoGame),
        ("1. e4 * 1. d4 *", PgnError::SeveralGames { count: 2 }),
        ("[White \"x\"\n\n1. e4 *", PgnError::BadTag { line: 1 }),
        (
            "[Event \"a\"]\n[White x]\n\n1. e4 *",
            PgnError::BadTag { line: 2 },
        ),
        ("[White \"bad \\escape\"]", PgnError::BadTag { line: 1 }),
        ("[ \"no name\"]", PgnError::BadTag { line: 1 }),
        (
            "1. e4 { never closed\n2. d4 *",
            PgnError::UnclosedComment { line: 1 },
        ),
        (
            "1. e4\n( 1. d4 ( 1. c4 ) e5 *",
            PgnError::UnclosedVariation { line: 2 },
        ),
        ("1. e4 ) e5 *", PgnError::UnmatchedParenthesis { line: 1 }),
        (
            "1. e4 e5 } *",
            PgnError::UnexpectedChar { line: 1, ch: '}' },
        ),
        (
            "[Event \"x\"]\n\n1. e4 e5\n2. Nf3 Nc6\n3. Bb5 Bb5 *",
            PgnError::BadMove {
                line: 5,
                ply: 6,
                number: "3...".into(),
                san: "Bb5".into(),
                error: SanError::Illegal { san: "Bb5".into() },
            },
        ),
        (
            "1. e4 e5 2. Zz9 *",
            PgnError::BadMove {
                line: 1,
                ply: 3,
                number: "2.".into(),
                san: "Zz9".into(),
                error: SanError::Syntax { san: "Zz9".into() },
            },
        ),
        (
            "1. -- e5 *",
            PgnError::BadMove {
                line: 1,
                ply: 1,
                number: "1.".into(),
                san: "--".into(),
                error: SanError::Syntax { san: "--".into() },
            },
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(text.parse::<PgnGame>(), Err(expected), "{text:?}");
    }

    let bad_fen = "[SetUp \"1\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *";
    match bad_fen.parse::<PgnGame>() {
        Err(PgnError::BadFen { fen, .. }) => assert_eq!(fen, "8/8/8/8/8/8/8/8 w - - 0 1"),
        other => panic!("expected a fen error, got {other:?}"),
    }
}

#[test]
fn pgn_errors_read_well() {
    let err = "[Event \"x\"]\n\n1. e4 e5\n2. Nf3 Nc6\n3. Bb5 Bb5 *"
        .parse::<PgnGame>()
        .expect_err("illegal move");
    assert_eq!(
        err.to_string(),
        "line 5, ply 6, move 3... Bb5: illegal san: no legal move matches \"Bb5\""
    );
    assert_eq!(
        PgnError::UnclosedComment { line: 3 }.to_string(),
        "line 3: comment opened with { is never closed"
    );
}
