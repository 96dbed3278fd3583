//! Static evaluation: material and piece-square tables, tapered between the
//! middlegame and the endgame by the material left on the board.
//!
//! The values are Ronald Friederich's PeSTO tables (published on the Chess
//! Programming Wiki), tuned by Texel's method. They alone make a reasonable
//! club-level evaluation; anything more must pay for itself in measured
//! strength (see the crate README).

use chess_rules::{Color, Position, Role, Square};

/// Material value of each role in the middlegame, pawn first.
const MG_VALUE: [i32; 6] = [82, 337, 365, 477, 1025, 0];
/// Material value of each role in the endgame, pawn first.
const EG_VALUE: [i32; 6] = [94, 281, 297, 512, 936, 0];
/// How much each role counts towards the middlegame phase.
const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];
/// The phase of the starting position: full middlegame weight.
const MAX_PHASE: i32 = 24;

/// Rough values by role used for move ordering and pruning margins, where a
/// single number per piece is enough.
pub(crate) const SIMPLE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

// Tables are written as a board is printed: a8 first, h1 last, from White's
// point of view. A white piece on `sq` reads entry `sq ^ 56`; a black piece
// reads entry `sq`, which mirrors the board for it.
#[rustfmt::skip]
const MG_TABLE: [[i32; 64]; 6] = [
    [ // pawn
          0,   0,   0,   0,   0,   0,   0,   0,
         98, 134,  61,  95,  68, 126,  34, -11,
         -6,   7,  26,  31,  65,  56,  25, -20,
        -14,  13,   6,  21,  23,  12,  17, -23,
        -27,  -2,  -5,  12,  17,   6,  10, -25,
        -26,  -4,  -4, -10,   3,   3,  33, -12,
        -35,  -1, -20, -23, -15,  24,  38, -22,
          0,   0,   0,   0,   0,   0,   0,   0,
    ],
    [ // knight
       -167, -89, -34, -49,  61, -97, -15,-107,
        -73, -41,  72,  36,  23,  62,   7, -17,
        -47,  60,  37,  65,  84, 129,  73,  44,
         -9,  17,  19,  53,  37,  69,  18,  22,
        -13,   4,  16,  13,  28,  19,  21,  -8,
        -23,  -9,  12,  10,  19,  17,  25, -16,
        -29, -53, -12,  -3,  -1,  18, -14, -19,
       -105, -21, -58, -33, -17, -28, -19, -23,
    ],
    [ // bishop
        -29,   4, -82, -37, -25, -42,   7,  -8,
        -26,  16, -18, -13,  30,  59,  18, -47,
        -16,  37,  43,  40,  35,  50,  37,  -2,
         -4,   5,  19,  50,  37,  37,   7,  -2,
         -6,  13,  13,  26,  34,  12,  10,   4,
          0,  15,  15,  15,  14,  27,  18,  10,
          4,  15,  16,   0,   7,  21,  33,   1,
        -33,  -3, -14, -21, -13, -12, -39, -21,
    ],
    [ // rook
         32,  42,  32,  51,  63,   9,  31,  43,
         27,  32,  58,  62,  80,  67,  26,  44,
         -5,  19,  26,  36,  17,  45,  61,  16,
        -24, -11,   7,  26,  24,  35,  -8, -20,
        -36, -26, -12,  -1,   9,  -7,   6, -23,
        -45, -25, -16, -17,   3,   0,  -5, -33,
        -44, -16, -20,  -9,  -1,  11,  -6, -71,
        -19, -13,   1,  17,  16,   7, -37, -26,
    ],
    [ // queen
        -28,   0,  29,  12,  59,  44,  43,  45,
        -24, -39,  -5,   1, -16,  57,  28,  54,
        -13, -17,   7,   8,  29,  56,  47,  57,
        -27, -27, -16, -16,  -1,  17,  -2,   1,
         -9, -26,  -9, -10,  -2,  -4,   3,  -3,
        -14,   2, -11,  -2,  -5,   2,  14,   5,
        -35,  -8,  11,   2,   8,  15,  -3,   1,
         -1, -18,  -9,  10, -15, -25, -31, -50,
    ],
    [ // king
        -65,  23,  16, -15, -56, -34,   2,  13,
         29,  -1, -20,  -7,  -8,  -4, -38, -29,
         -9,  24,   2, -16, -20,   6,  22, -22,
        -17, -20, -12, -27, -30, -25, -14, -36,
        -49,  -1, -27, -39, -46, -44, -33, -51,
        -14, -14, -22, -46, -44, -30, -15, -27,
          1,   7,  -8, -64, -43, -16,   9,   8,
        -15,  36,  12, -54,   8, -28,  24,  14,
    ],
];

#[rustfmt::skip]
const EG_TABLE: [[i32; 64]; 6] = [
    [ // pawn
          0,   0,   0,   0,   0,   0,   0,   0,
        178, 173, 158, 134, 147, 132, 165, 187,
         94, 100,  85,  67,  56,  53,  82,  84,
         32,  24,  13,   5,  -2,   4,  17,  17,
         13,   9,  -3,  -7,  -7,  -8,   3,  -1,
          4,   7,  -6,   1,   0,  -5,  -1,  -8,
         13,   8,   8,  10,  13,   0,   2,  -7,
          0,   0,   0,   0,   0,   0,   0,   0,
    ],
    [ // knight
        -58, -38, -13, -28, -31, -27, -63, -99,
        -25,  -8, -25,  -2,  -9, -25, -24, -52,
        -24, -20,  10,   9,  -1,  -9, -19, -41,
        -17,   3,  22,  22,  22,  11,   8, -18,
        -18,  -6,  16,  25,  16,  17,   4, -18,
        -23,  -3,  -1,  15,  10,  -3, -20, -22,
        -42, -20, -10,  -5,  -2, -20, -23, -44,
        -29, -51, -23, -15, -22, -18, -50, -64,
    ],
    [ // bishop
        -14, -21, -11,  -8,  -7,  -9, -17, -24,
         -8,  -4,   7, -12,  -3, -13,  -4, -14,
          2,  -8,   0,  -1,  -2,   6,   0,   4,
         -3,   9,  12,   9,  14,  10,   3,   2,
         -6,   3,  13,  19,   7,  10,  -3,  -9,
        -12,  -3,   8,  10,  13,   3,  -7, -15,
        -14, -18,  -7,  -1,   4,  -9, -15, -27,
        -23,  -9, -23,  -5,  -9, -16,  -5, -17,
    ],
    [ // rook
         13,  10,  18,  15,  12,  12,   8,   5,
         11,  13,  13,  11,  -3,   3,   8,   3,
          7,   7,   7,   5,   4,  -3,  -5,  -3,
          4,   3,  13,   1,   2,   1,  -1,   2,
          3,   5,   8,   4,  -5,  -6,  -8, -11,
         -4,   0,  -5,  -1,  -7, -12,  -8, -16,
         -6,  -6,   0,   2,  -9,  -9, -11,  -3,
         -9,   2,   3,  -1,  -5, -13,   4, -20,
    ],
    [ // queen
         -9,  22,  22,  27,  27,  19,  10,  20,
        -17,  20,  32,  41,  58,  25,  30,   0,
        -20,   6,   9,  49,  47,  35,  19,   9,
          3,  22,  24,  45,  57,  40,  57,  36,
        -18,  28,  19,  47,  31,  34,  39,  23,
        -16, -27,  15,   6,   9,  17,  10,   5,
        -22, -23, -30, -16, -16, -23, -36, -32,
        -33, -28, -22, -43,  -5, -32, -20, -41,
    ],
    [ // king
        -74, -35, -18, -18, -11,  15,   4, -17,
        -12,  17,  14,  17,  17,  38,  23,  11,
         10,  17,  23,  15,  20,  45,  44,  13,
         -8,  22,  24,  27,  26,  33,  26,   3,
        -18,  -4,  21,  24,  27,  23,   9, -11,
        -19,  -3,  11,  21,  23,  16,   7,  -9,
        -27, -11,   4,  13,  14,   4,  -5, -17,
        -53, -34, -21, -11, -28, -14, -24, -43,
    ],
];

/// A small bonus for the side to move, which is usually worth something.
const TEMPO: i32 = 10;

/// The table entry a piece of `color` on `sq` reads.
#[inline]
fn table_index(color: Color, sq: Square) -> usize {
    match color {
        Color::White => (sq.index() ^ 56) as usize,
        Color::Black => sq.index() as usize,
    }
}

/// The static evaluation of `position` in centipawns, from the point of view
/// of the side to move (positive is good for it).
pub fn evaluate(position: &Position) -> i32 {
    let board = position.board();
    let mut mg = [0i32; 2];
    let mut eg = [0i32; 2];
    let mut phase = 0;
    for color in Color::ALL {
        for role in Role::ALL {
            let r = role.index();
            for sq in board.pieces(color, role) {
                let i = table_index(color, sq);
                mg[color.index()] += MG_VALUE[r] + MG_TABLE[r][i];
                eg[color.index()] += EG_VALUE[r] + EG_TABLE[r][i];
                phase += PHASE_WEIGHT[r];
            }
        }
    }
    let us = position.turn().index();
    let them = 1 - us;
    // Early promotions can push the phase past the start position's.
    let mg_phase = phase.min(MAX_PHASE);
    let eg_phase = MAX_PHASE - mg_phase;
    let mg_score = mg[us] - mg[them];
    let eg_score = eg[us] - eg[them];
    (mg_score * mg_phase + eg_score * eg_phase) / MAX_PHASE + TEMPO
}

/// Whether neither side can possibly mate: bare kings, or a single minor
/// piece against a bare king. (Rarer dead positions are left to the search.)
pub fn is_insufficient_material(position: &Position) -> bool {
    let board = position.board();
    let heavy_or_pawns =
        board.by_role(Role::Pawn) | board.by_role(Role::Rook) | board.by_role(Role::Queen);
    if heavy_or_pawns.any() {
        return false;
    }
    let minors = board.by_role(Role::Knight) | board.by_role(Role::Bishop);
    minors.count() <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same position with the colours swapped and the board turned over.
    fn mirrored(fen: &str) -> String {
        let fields: Vec<&str> = fen.split(' ').collect();
        let board: Vec<String> = fields[0]
            .split('/')
            .rev()
            .map(|rank| {
                rank.chars()
                    .map(|c| {
                        if c.is_ascii_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect()
            })
            .collect();
        let side = if fields[1] == "w" { "b" } else { "w" };
        format!("{} {side} - - 0 1", board.join("/"))
    }

    fn eval(fen: &str) -> i32 {
        evaluate(&Position::from_fen(fen).expect("test fen"))
    }

    #[test]
    fn evaluation_is_colour_symmetric() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b - - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w - - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        ] {
            assert_eq!(eval(fen), eval(&mirrored(fen)), "{fen}");
        }
    }

    #[test]
    fn material_and_placement_count() {
        // A queen up is worth far more than the tempo bonus.
        assert!(eval("4k3/8/8/8/8/8/8/3QK3 w - - 0 1") > 800);
        assert!(eval("4k3/8/8/8/8/8/8/3QK3 b - - 0 1") < -800);
        // In the start position only the side to move's bonus remains.
        assert_eq!(evaluate(&Position::startpos()), TEMPO);
        // A centralised knight beats one in the corner.
        assert!(eval("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1") > eval("4k3/8/8/8/8/8/8/N3K3 w - - 0 1"));
        // A pawn about to promote is worth more in the endgame than at home.
        assert!(eval("4k3/P7/8/8/8/8/8/4K3 w - - 0 1") > eval("4k3/8/8/8/8/8/P7/4K3 w - - 0 1"));
    }

    #[test]
    fn insufficient_material_is_only_bare_kings_or_one_minor() {
        let insufficient = |fen| is_insufficient_material(&Position::from_fen(fen).expect("fen"));
        assert!(insufficient("4k3/8/8/8/8/8/8/4K3 w - - 0 1"));
        assert!(insufficient("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1"));
        assert!(insufficient("4k3/8/8/8/8/8/8/1N2K3 b - - 0 1"));
        assert!(!insufficient("4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1"));
        assert!(!insufficient("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"));
        assert!(!insufficient("4k3/8/8/8/8/8/8/3RK3 w - - 0 1"));
    }
}
