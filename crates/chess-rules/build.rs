//! Generates the attack tables and Zobrist keys at build time, so the library
//! has no runtime initialisation and no `unsafe`: `src/attacks.rs` and
//! `src/zobrist.rs` `include!` the file written here into `OUT_DIR`.
//!
//! Sliding pieces use magic bitboards: for each square, the relevant
//! occupancy (the ray squares short of the board edge) times a magic factor,
//! shifted right, indexes a dense table of attack sets. The magic factors are
//! found here by a seeded random search, so the output is deterministic.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const ROOK_DIRECTIONS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRECTIONS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const KNIGHT_STEPS: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING_STEPS: [(i32, i32); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

/// Seeded xorshift64* generator: deterministic tables on every build.
struct Prng(u64);

impl Prng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number with few bits set: good magic candidates.
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

fn offset(sq: u32, df: i32, dr: i32) -> Option<u32> {
    let file = (sq % 8) as i32 + df;
    let rank = (sq / 8) as i32 + dr;
    ((0..8).contains(&file) && (0..8).contains(&rank)).then_some((rank * 8 + file) as u32)
}

fn step_attacks(sq: u32, steps: &[(i32, i32)]) -> u64 {
    steps
        .iter()
        .filter_map(|&(df, dr)| offset(sq, df, dr))
        .fold(0, |bb, to| bb | 1 << to)
}

/// Attacks of a slider on `sq`, stopping at (and including) the first blocker.
fn slide(sq: u32, occupied: u64, directions: &[(i32, i32)]) -> u64 {
    let mut attacks = 0;
    for &(df, dr) in directions {
        let mut cur = sq;
        while let Some(next) = offset(cur, df, dr) {
            attacks |= 1 << next;
            if occupied & (1 << next) != 0 {
                break;
            }
            cur = next;
        }
    }
    attacks
}

/// The squares whose occupancy matters for a slider on `sq`: every ray
/// square except the last one before the edge (it is attacked either way).
fn relevant_mask(sq: u32, directions: &[(i32, i32)]) -> u64 {
    let mut mask = 0;
    for &(df, dr) in directions {
        let mut cur = sq;
        while let Some(next) = offset(cur, df, dr) {
            if offset(next, df, dr).is_some() {
                mask |= 1 << next;
            }
            cur = next;
        }
    }
    mask
}

struct Magic {
    mask: u64,
    factor: u64,
    shift: u32,
    offset: usize,
}

/// Finds a magic factor for every square and fills the shared attack table.
fn find_magics(directions: &[(i32, i32)], table: &mut Vec<u64>, rng: &mut Prng) -> Vec<Magic> {
    let mut magics = Vec::with_capacity(64);
    for sq in 0..64 {
        let mask = relevant_mask(sq, directions);
        let bits = mask.count_ones();
        let shift = 64 - bits;
        let size = 1usize << bits;

        // Every subset of the mask (carry-rippler) with its attack set.
        let mut occupancies = Vec::with_capacity(size);
        let mut subset = 0u64;
        loop {
            occupancies.push((subset, slide(sq, subset, directions)));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }

        let mut slots = vec![0u64; size];
        // `epoch[i] == attempt` marks slot i as used in this attempt, so the
        // slots need no clearing between attempts.
        let mut epoch = vec![0u32; size];
        let mut attempt = 0u32;
        let factor = loop {
            let factor = rng.sparse();
            // Quick reject: the top byte of mask * factor must be well mixed.
            if (mask.wrapping_mul(factor) >> 56).count_ones() < 6 {
                continue;
            }
            attempt += 1;
            let fits = occupancies.iter().all(|&(occ, attacks)| {
                let index = (occ.wrapping_mul(factor) >> shift) as usize;
                if epoch[index] != attempt {
                    epoch[index] = attempt;
                    slots[index] = attacks;
                    true
                } else {
                    slots[index] == attacks
                }
            });
            if fits {
                break factor;
            }
        };

        let offset = table.len();
        // Slots no occupancy maps to stay 0; they are never read.
        table.extend((0..size).map(|i| if epoch[i] == attempt { slots[i] } else { 0 }));
        magics.push(Magic {
            mask,
            factor,
            shift,
            offset,
        });
    }
    magics
}

fn write_u64_array(out: &mut String, name: &str, values: &[u64]) {
    writeln!(out, "static {name}: [u64; {}] = [", values.len()).unwrap();
    for chunk in values.chunks(8) {
        for v in chunk {
            write!(out, "0x{v:x},").unwrap();
        }
        out.push('\n');
    }
    out.push_str("];\n");
}

fn write_magics(out: &mut String, name: &str, magics: &[Magic]) {
    writeln!(out, "static {name}: [Magic; 64] = [").unwrap();
    for m in magics {
        writeln!(
            out,
            "Magic {{ mask: 0x{:x}, factor: 0x{:x}, shift: {}, offset: {} }},",
            m.mask, m.factor, m.shift, m.offset
        )
        .unwrap();
    }
    out.push_str("];\n");
}

fn write_square_pairs(out: &mut String, name: &str, f: impl Fn(u32, u32) -> u64) {
    writeln!(out, "static {name}: [[u64; 64]; 64] = [").unwrap();
    for a in 0..64 {
        out.push('[');
        for b in 0..64 {
            write!(out, "0x{:x},", f(a, b)).unwrap();
        }
        out.push_str("],\n");
    }
    out.push_str("];\n");
}

/// The direction from `a` to `b` if they share a rank, file or diagonal.
fn direction(a: u32, b: u32) -> Option<(i32, i32)> {
    if a == b {
        return None;
    }
    let df = (b % 8) as i32 - (a % 8) as i32;
    let dr = (b / 8) as i32 - (a / 8) as i32;
    (df == 0 || dr == 0 || df.abs() == dr.abs()).then_some((df.signum(), dr.signum()))
}

fn between(a: u32, b: u32) -> u64 {
    let Some((df, dr)) = direction(a, b) else {
        return 0;
    };
    let mut bb = 0;
    let mut cur = offset(a, df, dr);
    while let Some(sq) = cur {
        if sq == b {
            break;
        }
        bb |= 1 << sq;
        cur = offset(sq, df, dr);
    }
    bb
}

fn line(a: u32, b: u32) -> u64 {
    let Some((df, dr)) = direction(a, b) else {
        return 0;
    };
    let forward = slide(a, 0, &[(df, dr)]);
    let backward = slide(a, 0, &[(-df, -dr)]);
    forward | backward | 1 << a
}

fn attack_tables(out: &mut String) {
    let knight: Vec<u64> = (0..64).map(|sq| step_attacks(sq, &KNIGHT_STEPS)).collect();
    let king: Vec<u64> = (0..64).map(|sq| step_attacks(sq, &KING_STEPS)).collect();
    let white_pawn: Vec<u64> = (0..64)
        .map(|sq| step_attacks(sq, &[(-1, 1), (1, 1)]))
        .collect();
    let black_pawn: Vec<u64> = (0..64)
        .map(|sq| step_attacks(sq, &[(-1, -1), (1, -1)]))
        .collect();
    write_u64_array(out, "KNIGHT_ATTACKS", &knight);
    write_u64_array(out, "KING_ATTACKS", &king);
    write_u64_array(out, "WHITE_PAWN_ATTACKS", &white_pawn);
    write_u64_array(out, "BLACK_PAWN_ATTACKS", &black_pawn);

    let mut rng = Prng(0x9e37_79b9_7f4a_7c15);
    let mut table = Vec::new();
    let rook = find_magics(&ROOK_DIRECTIONS, &mut table, &mut rng);
    let bishop = find_magics(&BISHOP_DIRECTIONS, &mut table, &mut rng);
    write_magics(out, "ROOK_MAGICS", &rook);
    write_magics(out, "BISHOP_MAGICS", &bishop);
    write_u64_array(out, "SLIDER_ATTACKS", &table);

    write_square_pairs(out, "BETWEEN", between);
    write_square_pairs(out, "LINE", line);
}

fn zobrist_keys(out: &mut String) {
    // A different seed from the magics: the keys only need to look random.
    let mut rng = Prng(0x5851_f42d_4c95_7f2d);
    let pieces: Vec<u64> = (0..12 * 64).map(|_| rng.next()).collect();
    write_u64_array(out, "PIECE_KEYS", &pieces);
    let rights: Vec<u64> = (0..4).map(|_| rng.next()).collect();
    // One key per combination of the four rights, the XOR of its members.
    let castling: Vec<u64> = (0..16u32)
        .map(|bits| {
            (0..4)
                .filter(|i| bits & (1 << i) != 0)
                .fold(0, |key, i| key ^ rights[i])
        })
        .collect();
    write_u64_array(out, "CASTLING_KEYS", &castling);
    let ep: Vec<u64> = (0..8).map(|_| rng.next()).collect();
    write_u64_array(out, "EN_PASSANT_FILE_KEYS", &ep);
    writeln!(out, "const BLACK_TO_MOVE_KEY: u64 = 0x{:x};", rng.next()).unwrap();
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");

    let mut attacks = String::new();
    attack_tables(&mut attacks);
    fs::write(Path::new(&out_dir).join("attack_tables.rs"), attacks).expect("OUT_DIR is writable");

    let mut zobrist = String::new();
    zobrist_keys(&mut zobrist);
    fs::write(Path::new(&out_dir).join("zobrist_keys.rs"), zobrist).expect("OUT_DIR is writable");
}
