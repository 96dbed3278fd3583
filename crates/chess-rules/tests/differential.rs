//! Differential test against cozy-chess, an independent move generator:
//! thousands of seeded random games, comparing at every ply the legal moves
//! (from, to and promotion), check, checkmate and stalemate, and the piece placement,
//! and over each game, which positions count as the same for repetition.

use std::collections::HashMap;

use chess_rules::{Position, Role};

/// Seeded xorshift64: the same games on every run, no `rand` needed.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Start positions rich in castling, en passant and promotions.
const STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
    "4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
];

const GAMES: usize = 2000;
const MAX_PLIES: usize = 150;

/// A move as a number: from, to and promotion role, so that comparing
/// thousands of move lists needs no strings. Castling is the king's move to
/// its destination, as in standard UCI.
fn encode(from: usize, to: usize, promotion: Option<usize>) -> u32 {
    (from | to << 6 | promotion.map_or(0, |role| role + 1) << 12) as u32
}

fn our_moves(pos: &Position) -> Vec<u32> {
    let mut moves: Vec<u32> = pos
        .legal_moves()
        .iter()
        .map(|m| {
            encode(
                m.from().index() as usize,
                m.to().index() as usize,
                m.promotion().map(Role::index),
            )
        })
        .collect();
    moves.sort_unstable();
    moves
}

fn cozy_moves(board: &cozy_chess::Board) -> Vec<u32> {
    let mut moves = Vec::new();
    let us = board.side_to_move();
    board.generate_moves(|piece_moves| {
        for mv in piece_moves {
            let (from, mut to) = (mv.from as usize, mv.to as usize);
            // cozy-chess writes castling as the king taking its own rook.
            if piece_moves.piece == cozy_chess::Piece::King && board.color_on(mv.to) == Some(us) {
                to = if to > from { from + 2 } else { from - 2 };
            }
            // cozy-chess's pieces are in the same order as our roles.
            moves.push(encode(from, to, mv.promotion.map(|p| p as usize)));
        }
        false
    });
    moves.sort_unstable();
    moves
}

/// What makes two positions the same for repetition, in cozy-chess's
/// terms: its hash without en passant, plus the en passant file only when
/// cozy-chess can capture there (as its `same_position` decides).
fn cozy_repetition_identity(board: &cozy_chess::Board) -> (u64, Option<usize>) {
    let mut ep_file = None;
    if let Some(file) = board.en_passant() {
        board.generate_moves(|piece_moves| {
            if piece_moves.piece == cozy_chess::Piece::Pawn {
                for mv in piece_moves {
                    if mv.to.file() == file
                        && mv.from.file() != file
                        && board.piece_on(mv.to).is_none()
                    {
                        ep_file = Some(file as usize);
                    }
                }
            }
            false
        });
    }
    (board.hash_without_ep(), ep_file)
}

/// Checks that `a` and `b` name the same partition: equal in one exactly
/// when equal in the other.
fn assert_same_partition<A, B>(pairs: &[(A, B)], context: &str)
where
    A: Eq + std::hash::Hash + Copy + std::fmt::Debug,
    B: Eq + std::hash::Hash + Copy + std::fmt::Debug,
{
    let mut a_to_b = HashMap::new();
    let mut b_to_a = HashMap::new();
    for (ply, &(a, b)) in pairs.iter().enumerate() {
        assert_eq!(*a_to_b.entry(a).or_insert(b), b, "ply {ply}: {context}");
        assert_eq!(*b_to_a.entry(b).or_insert(a), a, "ply {ply}: {context}");
    }
}

/// Whether both boards have the same pieces on the same squares.
fn same_placement(pos: &Position, board: &cozy_chess::Board) -> bool {
    let colors = [
        (chess_rules::Color::White, cozy_chess::Color::White),
        (chess_rules::Color::Black, cozy_chess::Color::Black),
    ];
    colors.into_iter().all(|(ours, theirs)| {
        Role::ALL.into_iter().all(|role| {
            pos.board().pieces(ours, role).0
                == board
                    .colored_pieces(theirs, cozy_chess::Piece::ALL[role.index()])
                    .0
        })
    })
}

#[test]
fn random_games_agree_with_cozy_chess() {
    let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
    let mut plies_checked = 0usize;
    let mut repeated_positions = 0usize;
    let (mut mates, mut stalemates, mut en_passants, mut castles, mut promotions) = (0, 0, 0, 0, 0);

    for game in 0..GAMES {
        let start = STARTS[game % STARTS.len()];
        let mut pos = Position::from_fen(start).expect("start positions are valid");
        let mut board = cozy_chess::Board::from_fen(start, false).expect("cozy reads the fen");
        let mut history = Vec::new();
        // Zobrist key and cozy-chess's notion of the same position, by ply.
        let mut identities = Vec::new();

        for _ in 0..MAX_PLIES {
            let context = || format!("game {game}, fen {}, after {history:?}", pos.fen());
            let ours = our_moves(&pos);
            assert_eq!(
                ours,
                cozy_moves(&board),
                "legal moves differ: {}",
                context()
            );
            assert_eq!(
                pos.is_check(),
                !board.checkers().is_empty(),
                "check differs: {}",
                context()
            );
            assert_eq!(
                pos.checkers().count(),
                board.checkers().len(),
                "checker count differs: {}",
                context()
            );
            assert!(
                same_placement(&pos, &board),
                "placement differs: {}, cozy {board}",
                context()
            );
            assert_eq!(pos.count_legal_moves(), ours.len(), "{}", context());
            assert_eq!(pos.has_legal_moves(), !ours.is_empty(), "{}", context());
            identities.push((pos.zobrist_key(), cozy_repetition_identity(&board)));
            plies_checked += 1;

            if ours.is_empty() {
                // cozy-chess has no move either (compared above), so
                // checkmate and stalemate agree once check does.
                assert_eq!(pos.is_checkmate(), pos.is_check(), "{}", context());
                assert_eq!(pos.is_stalemate(), !pos.is_check(), "{}", context());
                if pos.is_check() {
                    mates += 1;
                } else {
                    stalemates += 1;
                }
                break;
            }

            let moves = pos.legal_moves();
            let m = moves[rng.below(moves.len())];
            let uci = m.to_uci().to_string();
            en_passants += usize::from(m.is_en_passant());
            castles += usize::from(m.castling_side().is_some());
            promotions += usize::from(m.promotion().is_some() && m.role() == Role::Pawn);
            let cozy_mv = cozy_chess::util::parse_uci_move(&board, &uci)
                .unwrap_or_else(|err| panic!("cozy rejects {uci}: {err:?}: {}", context()));
            board.play(cozy_mv);
            pos = pos.play(&m).expect("generated moves are legal");
            history.push(uci);
        }
        // Repetition: positions share a Zobrist key exactly when cozy-chess
        // calls them the same (placement, side, castling, legal en passant).
        assert_same_partition(&identities, &format!("game {game}: {history:?}"));
        let distinct: std::collections::HashSet<u64> =
            identities.iter().map(|(key, _)| *key).collect();
        repeated_positions += identities.len() - distinct.len();
    }

    // The games must actually exercise the special moves and endings.
    assert!(plies_checked > GAMES * 50, "only {plies_checked} plies");
    println!("{repeated_positions} repeated positions, {en_passants} en passant captures");
    for (what, count) in [
        ("checkmates", mates),
        ("stalemates", stalemates),
        ("en passant captures", en_passants),
        ("castlings", castles),
        ("promotions", promotions),
        ("repeated positions", repeated_positions),
    ] {
        assert!(count > 10, "only {count} {what} in {GAMES} games");
    }
}
