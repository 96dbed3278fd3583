//! PGN import of real games played through to their final positions,
//! export (tags, move numbers, clocks, comments, NAGs, wrapping), the limits
//! on hostile input and the exact error for each kind of bad input.
//!
//! The final positions were computed independently with python-chess 1.11.

use chess_rules::pgn::{
    MAX_GAME_BYTES, MAX_TAGS, PgnError, PgnGame, PgnResult, PlyAnnotation, read_games,
};
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
        assert!(game.annotations.is_empty(), "{white}");
        assert_eq!(game.comment, None, "{white}");
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
    let clocks: Vec<Option<u64>> = (0..33).map(|ply| game.clock(ply)).collect();
    assert!(clocks.iter().all(Option::is_some), "{clocks:?}");
    assert_eq!(
        clocks[..4],
        [Some(300_000), Some(300_000), Some(298_000), Some(297_000)]
    );
    assert_eq!(clocks[32], Some(263_000));
    // The annotations are gone from the SAN kept in the record, and kept
    // as NAGs: `?!` and `$6` say the same once.
    assert_eq!(game.record.plies()[5].san, "Bg4");
    assert_eq!(game.annotations[5].nags, [6]);
    assert_eq!(game.record.plies()[18].san, "Nxb5");
    assert_eq!(game.annotations[18].nags, [1]);
    assert_eq!(game.annotations[12].nags, [1], "7. Qb3 $1");
    assert_eq!(game.annotations[30].nags, [3], "16. Qb8+!!");
    assert_eq!(
        game.comment.as_deref(),
        Some("A comment before the first move.")
    );
    // The rest-of-line comment after 7... Qe7, beside its clock.
    assert_eq!(
        game.annotations[13],
        PlyAnnotation {
            clock_ms: Some(260_000),
            nags: vec![],
            comment: Some("a rest-of-line comment (ignored)".into()),
        }
    );
    // Comments inside the skipped variation are skipped with it.
    assert!(
        game.annotations
            .iter()
            .filter_map(|a| a.comment.as_deref())
            .all(|text| !text.contains("quieter")),
    );
}

#[test]
fn comments_nags_and_clocks_survive_import_then_export() {
    let game: PgnGame = ANNOTATED.parse().expect("annotated game");
    let text = game.to_pgn();
    assert!(text.lines().all(|line| line.len() <= 80), "{text}");
    // Wherever the lines were wrapped.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for kept in [
        "{ A comment before the first move. }",
        "3... Bg4 $6 { [%clk 0:04:50] }",
        "7. Qb3 $1 { [%clk 0:04:49] }",
        "{ [%clk 0:04:20] a rest-of-line comment (ignored) }",
        "16. Qb8+ $3 { [%clk 0:04:24] }",
    ] {
        assert!(flat.contains(kept), "{kept:?} missing from\n{text}");
    }
    let again: PgnGame = text.parse().expect("exported pgn");
    assert_eq!(again, game);
    assert_eq!(again.to_pgn(), text);
}

#[test]
fn comment_text_that_cannot_be_in_braces_is_a_line_comment() {
    let mut game = PgnGame::from_record(record_of("e4 e5"));
    game.annotation_mut(0).comment = Some("a } brace".into());
    game.annotation_mut(1).clock_ms = Some(61_000);
    game.annotation_mut(1).comment = Some("another } one".into());
    let text = game.to_pgn();
    assert!(
        text.ends_with("1. e4 ;a } brace\n1... e5 { [%clk 0:01:01] } ;another } one\n*\n\n"),
        "{text}"
    );
    let again: PgnGame = text.parse().expect("exported pgn");
    assert_eq!(again.annotations, game.annotations);
    assert_eq!(again.record, game.record);
}

#[test]
fn exports_tags_move_numbers_and_clocks() {
    let mut game = PgnGame::new(Position::startpos());
    game.record = record_of("f3 e5 g4 Qh4#");
    game.result = PgnResult::BlackWins;
    for (ply, millis) in [300_000, 299_999, 298_000, 297_400].into_iter().enumerate() {
        game.annotation_mut(ply).clock_ms = Some(millis);
    }
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
    let clocks: Vec<Option<u64>> = (0..4).map(|ply| again.clock(ply)).collect();
    assert_eq!(
        clocks,
        [Some(300_000), Some(299_000), Some(298_000), Some(297_000)]
    );
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
fn each_ply_keeps_its_own_clock_when_only_some_have_one() {
    // Real exports lack a clock on some moves.
    let text = "1. e4 { [%clk 0:01:00] } e5 2. Nf3 { [%eval 0.2] [%clk 0:00:59.5] } Nc6 *";
    let game: PgnGame = text.parse().expect("game");
    let clocks: Vec<Option<u64>> = (0..4).map(|ply| game.clock(ply)).collect();
    assert_eq!(clocks, [Some(60_000), None, Some(59_500), None]);
    assert_eq!(game.annotations[2].comment.as_deref(), Some("[%eval 0.2]"));
    // The last annotated ply ends the list.
    assert_eq!(game.annotations.len(), 3);

    let exported = game.to_pgn();
    assert!(
        exported.ends_with(
            "1. e4 { [%clk 0:01:00] } 1... e5 2. Nf3 { [%clk 0:00:59] [%eval 0.2] } 2... Nc6\n*\n\n"
        ),
        "{exported}"
    );
    let again: PgnGame = exported.parse().expect("exported pgn");
    let clocks: Vec<Option<u64>> = (0..4).map(|ply| again.clock(ply)).collect();
    assert_eq!(clocks, [Some(60_000), None, Some(59_000), None]);
}

#[test]
fn clocks_too_large_for_milliseconds_are_refused() {
    for (text, clock) in [
        (
            "1. e4 { [%clk 18446744073709551615:00:00] } *",
            "18446744073709551615:00:00",
        ),
        // Fits a u64 as hours, not as milliseconds.
        (
            "1. e4 { [%clk 5124095576031:00:00] } *",
            "5124095576031:00:00",
        ),
    ] {
        assert_eq!(
            text.parse::<PgnGame>(),
            Err(PgnError::BadClock {
                line: 1,
                ply: 1,
                clock: clock.into()
            }),
            "{text}"
        );
    }
}

#[test]
fn many_distinct_tags_are_read_up_to_the_limit() {
    let tag_lines = |count: usize| {
        (0..count)
            .map(|index| format!("[Tag{index} \"{index}\"]\n"))
            .collect::<String>()
    };
    let game: PgnGame = format!("{}\n1. e4 *\n", tag_lines(MAX_TAGS))
        .parse()
        .expect("the most tags allowed");
    assert_eq!(game.tags.len(), MAX_TAGS);
    assert_eq!(game.tag("Tag999"), Some("999"));
    // A name read again replaces its value in place and does not count twice.
    let repeated = format!("{}[Tag0 \"again\"]\n\n1. e4 *\n", tag_lines(MAX_TAGS));
    let game: PgnGame = repeated.parse().expect("a repeated tag");
    assert_eq!(game.tags.len(), MAX_TAGS);
    assert_eq!(game.tags[0], ("Tag0".to_owned(), "again".to_owned()));

    for count in [MAX_TAGS + 1, 50_000] {
        assert_eq!(
            format!("{}\n1. e4 *\n", tag_lines(count)).parse::<PgnGame>(),
            Err(PgnError::TooManyTags {
                line: MAX_TAGS + 1,
                max: MAX_TAGS
            }),
            "{count} tags"
        );
    }
}

#[test]
fn a_game_longer_than_the_limit_is_refused() {
    let comment = |bytes: usize| format!("[Event \"x\"]\n\n1. e4 {{{}}} *", "a".repeat(bytes));
    let around = comment(0).len();
    let fits = comment(MAX_GAME_BYTES - around);
    assert_eq!(fits.len(), MAX_GAME_BYTES);
    assert!(fits.parse::<PgnGame>().is_ok());
    assert_eq!(
        comment(MAX_GAME_BYTES - around + 1).parse::<PgnGame>(),
        Err(PgnError::GameTooLarge {
            line: 1,
            max_bytes: MAX_GAME_BYTES,
        })
    );
    // Moves count as well, and the line is where the game began.
    let mut moves = String::from("1. e4 * \n\n");
    while moves.len() <= MAX_GAME_BYTES + 100 {
        moves.push_str("Nf3 Nf6 Ng1 Ng8 ");
    }
    assert_eq!(
        read_games(&moves),
        Err(PgnError::GameTooLarge {
            line: 3,
            max_bytes: MAX_GAME_BYTES
        })
    );
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
            "1. e4 { [%clk 1:60:00] } *",
            PgnError::BadClock {
                line: 1,
                ply: 1,
                clock: "1:60:00".into(),
            },
        ),
        (
            "1. e4 e5\n{ [%clk 0:01:00 }\n*",
            PgnError::BadClock {
                line: 2,
                ply: 2,
                clock: "0:01:00".into(),
            },
        ),
        (
            "1. e4 $256 *",
            PgnError::BadNag {
                line: 1,
                nag: "$256".into(),
            },
        ),
        (
            "1. e4 $x *",
            PgnError::BadNag {
                line: 1,
                nag: "$x".into(),
            },
        ),
        (
            "$1 1. e4 *",
            PgnError::BadNag {
                line: 1,
                nag: "$1".into(),
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
    let err = "1. e4 { [%clk 99999999999999999999:00:00] } *"
        .parse::<PgnGame>()
        .expect_err("huge clock");
    assert_eq!(
        err.to_string(),
        "line 1, ply 1: clock \"99999999999999999999:00:00\" is not a time h:mm:ss that fits"
    );
    assert_eq!(
        PgnError::GameTooLarge {
            line: 7,
            max_bytes: MAX_GAME_BYTES
        }
        .to_string(),
        "the game starting on line 7 is longer than 1048576 bytes"
    );
}
