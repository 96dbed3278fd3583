//! The engine's choices: mates found, legal moves always, reproducible games.

use std::sync::atomic::AtomicBool;

use chess_engine::{Engine, Level, Limits, Score};
use chess_rules::{Move, Position};

fn position(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|err| panic!("test fen {fen:?}: {err}"))
}

fn after(position: &Position, m: &Move) -> Position {
    position.play(m).expect("engine moves are legal")
}

/// Whether the side to move has a move that mates at once.
fn has_mate_in_one(position: &Position) -> bool {
    position
        .legal_moves()
        .iter()
        .any(|m| after(position, m).is_checkmate())
}

/// Whether `m` mates at once, or leaves the opponent only replies after
/// which a mate in one exists: checked by brute force, not by the engine.
fn forces_mate_in_two(position: &Position, m: &Move) -> bool {
    let child = after(position, m);
    if child.is_checkmate() {
        return true;
    }
    let replies = child.legal_moves();
    !replies.is_empty() && replies.iter().all(|r| has_mate_in_one(&after(&child, r)))
}

const MATE_IN_ONE: &[&str] = &[
    // Scholar's mate: Qxf7#.
    "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    // Back rank, White: Ra8#.
    "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
    // Back rank, Black: Ra1#.
    "r5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1",
    // Smothered mate: Nf7#.
    "6rk/6pp/8/6N1/8/8/8/6K1 w - - 0 1",
    // Mate by promotion: c8=Q# (or c8=R#).
    "k7/2P5/1K6/8/8/8/8/8 w - - 0 1",
];

const MATE_IN_TWO: &[&str] = &[
    // King and rook: 1.Kb6 Kb8 2.Rh8# (or 1.Kc7 Ka7 2.Ra1#).
    "k7/8/2K5/8/8/8/8/7R w - - 0 1",
    // Rook ladder, White: 1.Ra7 and 2.Rb8#.
    "6k1/8/8/8/8/8/R7/1R4K1 w - - 0 1",
    // Rook ladder, Black.
    "1r4k1/r7/8/8/8/8/8/6K1 b - - 0 1",
];

#[test]
fn finds_mate_in_one_at_both_levels() {
    let stop = AtomicBool::new(false);
    for level in Level::ALL {
        for fen in MATE_IN_ONE {
            let pos = position(fen);
            let mut engine = Engine::new(level, 1);
            let result = engine.search(&pos, &[], Limits::depth(4), &stop);
            let best = result.best_move.expect("a move");
            assert!(
                after(&pos, &best).is_checkmate(),
                "{level} played {best} in {fen}"
            );
            assert_eq!(result.score, Score::Mate(1), "{level} in {fen}");
        }
    }
}

#[test]
fn finds_mate_in_two_at_level_two() {
    let stop = AtomicBool::new(false);
    for fen in MATE_IN_TWO {
        let pos = position(fen);
        assert!(!has_mate_in_one(&pos), "{fen} has a mate in one");
        let mut engine = Engine::new(Level::Hard, 1);
        let result = engine.search(&pos, &[], Limits::depth(6), &stop);
        let best = result.best_move.expect("a move");
        assert_eq!(result.score, Score::Mate(2), "score in {fen}");
        assert!(
            forces_mate_in_two(&pos, &best),
            "{best} does not force mate in two in {fen}"
        );
        assert!(result.pv.len() >= 3, "pv {:?} too short", result.pv);
    }
}

#[test]
fn sees_being_mated_and_a_finished_game() {
    let stop = AtomicBool::new(false);
    let mut engine = Engine::new(Level::Hard, 1);
    // Black to move, mated.
    let mated = position("R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1");
    let result = engine.search(&mated, &[], Limits::depth(3), &stop);
    assert_eq!(result.best_move, None);
    assert_eq!(result.score, Score::Mate(0));
    // Stalemate: no move, a draw.
    let stalemate = position("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1");
    let result = engine.search(&stalemate, &[], Limits::depth(3), &stop);
    assert_eq!(result.best_move, None);
    assert_eq!(result.score, Score::Centipawns(0));
}

/// A tiny generator for test positions, independent of the engine's own.
struct TestRng(u64);

impl TestRng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Positions reached by random legal moves from the start.
fn random_positions(count: usize, seed: u64) -> Vec<Position> {
    let mut rng = TestRng(seed);
    let mut positions = Vec::new();
    while positions.len() < count {
        let mut pos = Position::startpos();
        let plies = rng.below(120);
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.below(moves.len())];
            pos.play_unchecked(&m);
        }
        positions.push(pos);
    }
    positions
}

#[test]
fn never_returns_an_illegal_move_from_random_positions() {
    let stop = AtomicBool::new(false);
    for (i, pos) in random_positions(60, 0x1234_5678).iter().enumerate() {
        for level in Level::ALL {
            let mut engine = Engine::new(level, i as u64);
            let result = engine.search(pos, &[], Limits::nodes(3_000), &stop);
            match result.best_move {
                Some(m) => assert!(pos.is_legal(&m), "{level} chose {m:?} in {}", pos.fen()),
                None => assert!(
                    pos.legal_moves().is_empty(),
                    "{level} found no move in {}",
                    pos.fen()
                ),
            }
            if let Some(&first) = result.pv.first() {
                assert_eq!(Some(first), result.best_move, "pv starts with the move");
            }
        }
    }
}

#[test]
fn a_raised_stop_flag_still_gives_a_legal_move() {
    let stop = AtomicBool::new(true);
    let pos = Position::startpos();
    let result = Engine::new(Level::Hard, 0).search(&pos, &[], Limits::infinite(), &stop);
    let best = result.best_move.expect("a move");
    assert!(pos.is_legal(&best));
    assert_eq!(result.depth, 1, "only the unstoppable first iteration ran");
}

#[test]
fn a_node_limit_is_respected() {
    let stop = AtomicBool::new(false);
    let pos = Position::startpos();
    let result = Engine::new(Level::Hard, 0).search(&pos, &[], Limits::nodes(20_000), &stop);
    assert!(result.nodes <= 20_000, "visited {} nodes", result.nodes);
    assert!(
        result.nodes >= 10_000,
        "stopped early at {} nodes",
        result.nodes
    );
    assert!(result.depth >= 2);
}

fn play_uci(position: &Position, uci: &str) -> Position {
    let m = uci
        .parse::<chess_rules::UciMove>()
        .expect("test move syntax")
        .to_move(position)
        .expect("test move is legal");
    after(position, &m)
}

#[test]
fn a_losing_side_takes_a_repetition_from_the_game_history() {
    // Black has a lone king against queen and rook. The game went
    // ... Kd7 2. Qh2 Ke8 3. Qh1, so Kd7 now repeats a position: a draw,
    // which beats anything else Black has.
    let pos = position("4k3/8/8/8/8/8/8/R3K2Q b - - 4 40");
    let after_kd7 = play_uci(&pos, "e8d7");
    let after_qh2 = play_uci(&after_kd7, "h1h2");
    let after_ke8 = play_uci(&after_qh2, "d7e8");
    let back = play_uci(&after_ke8, "h2h1");
    assert_eq!(back.zobrist_key(), pos.zobrist_key());
    let history = [
        after_kd7.zobrist_key(),
        after_qh2.zobrist_key(),
        after_ke8.zobrist_key(),
    ];
    let stop = AtomicBool::new(false);

    let mut engine = Engine::new(Level::Hard, 0);
    let with_history = engine.search(&pos, &history, Limits::depth(3), &stop);
    let best = with_history.best_move.expect("a move");
    assert_eq!(best.to_uci().to_string(), "e8d7");
    assert_eq!(with_history.score, Score::Centipawns(0));

    let mut engine = Engine::new(Level::Hard, 0);
    let without = engine.search(&pos, &[], Limits::depth(3), &stop);
    match without.score {
        Score::Centipawns(cp) => assert!(cp < -500, "score {cp}"),
        Score::Mate(n) => assert!(n < 0, "mate {n}"),
    }
}

/// Plays a game between the levels and returns its moves in UCI.
fn play_levels_game(easy_seed: u64, plies: usize) -> Vec<String> {
    let stop = AtomicBool::new(false);
    let mut hard = Engine::new(Level::Hard, 0);
    let mut easy = Engine::new(Level::Easy, easy_seed);
    let mut pos = Position::startpos();
    let mut history = Vec::new();
    let mut moves = Vec::new();
    for ply in 0..plies {
        let engine = if ply % 2 == 0 { &mut hard } else { &mut easy };
        // A node limit, unlike a time limit, gives the same search every run.
        let result = engine.search(&pos, &history, Limits::nodes(4_000), &stop);
        let Some(m) = result.best_move else { break };
        history.push(pos.zobrist_key());
        pos = after(&pos, &m);
        moves.push(m.to_uci().to_string());
    }
    moves
}

#[test]
fn a_fixed_seed_game_between_the_levels_is_reproducible() {
    let first = play_levels_game(7, 40);
    let again = play_levels_game(7, 40);
    assert_eq!(first, again);
    assert!(first.len() >= 20, "game ended early: {first:?}");
    // The seed matters: the easy level's choices are random.
    let other_seed = play_levels_game(8, 40);
    assert_ne!(first, other_seed);
}

#[test]
fn the_easy_level_varies_its_choice_among_reasonable_moves() {
    // In the start position many moves are close: different seeds pick
    // different ones, but none of them gives material away.
    let stop = AtomicBool::new(false);
    let pos = Position::startpos();
    let mut chosen = std::collections::HashSet::new();
    for seed in 0..20 {
        let result = Engine::new(Level::Easy, seed).search(&pos, &[], Limits::infinite(), &stop);
        let m = result.best_move.expect("a move");
        assert_eq!(result.depth, 2, "easy searches two plies");
        chosen.insert(m.to_uci().to_string());
    }
    assert!(chosen.len() >= 3, "only {chosen:?}");
}
