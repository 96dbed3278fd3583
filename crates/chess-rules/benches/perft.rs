//! Perft speed of chess-rules next to cozy-chess and the `chess` crate, on
//! the start position and Kiwipete, all with bulk counting at the last ply.
//!
//! `cargo bench -p chess-rules` prints a summary (best of several runs, in
//! million nodes per second, with the ratio to cozy-chess) and then runs the
//! criterion benchmarks, whose throughput is also in nodes per second.

use std::hint::black_box;
use std::str::FromStr;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};

struct Case {
    name: &'static str,
    fen: &'static str,
    depth: u32,
    nodes: u64,
}

const CASES: [Case; 2] = [
    Case {
        name: "startpos",
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        depth: 5,
        nodes: 4_865_609,
    },
    Case {
        name: "kiwipete",
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        depth: 4,
        nodes: 4_085_603,
    },
];

fn ours(fen: &str, depth: u32) -> u64 {
    let pos = chess_rules::Position::from_fen(fen).expect("valid fen");
    chess_rules::perft(&pos, depth)
}

fn cozy_perft(board: &cozy_chess::Board, depth: u32) -> u64 {
    let mut nodes = 0;
    if depth == 1 {
        board.generate_moves(|moves| {
            nodes += moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|moves| {
            for mv in moves {
                let mut child = board.clone();
                child.play_unchecked(mv);
                nodes += cozy_perft(&child, depth - 1);
            }
            false
        });
    }
    nodes
}

fn cozy(fen: &str, depth: u32) -> u64 {
    let board = cozy_chess::Board::from_fen(fen, false).expect("valid fen");
    cozy_perft(&board, depth)
}

fn chess_crate_perft(board: &chess::Board, depth: u32) -> u64 {
    let moves = chess::MoveGen::new_legal(board);
    if depth == 1 {
        moves.len() as u64
    } else {
        moves
            .map(|mv| chess_crate_perft(&board.make_move_new(mv), depth - 1))
            .sum()
    }
}

fn chess_crate(fen: &str, depth: u32) -> u64 {
    let board = chess::Board::from_str(fen).expect("valid fen");
    chess_crate_perft(&board, depth)
}

type Perft = fn(&str, u32) -> u64;

const IMPLEMENTATIONS: [(&str, Perft); 3] = [
    ("chess-rules", ours),
    ("cozy-chess", cozy),
    ("chess", chess_crate),
];

const ROUNDS: u32 = 15;

/// Time of one perft run, checked against the published count.
fn timed_run(f: Perft, case: &Case) -> Duration {
    let start = Instant::now();
    let nodes = f(black_box(case.fen), black_box(case.depth));
    let elapsed = start.elapsed();
    assert_eq!(nodes, case.nodes, "wrong perft for {}", case.name);
    elapsed
}

fn print_summary() {
    println!("perft summary (best of {ROUNDS} interleaved rounds, million nodes per second):");
    for case in &CASES {
        // Each round runs every implementation once, so that a burst of
        // load from other processes hurts them alike; the best round of
        // each is the least disturbed.
        let mut best = [Duration::MAX; IMPLEMENTATIONS.len()];
        for _ in 0..ROUNDS {
            for (slot, &(_, f)) in best.iter_mut().zip(&IMPLEMENTATIONS) {
                *slot = (*slot).min(timed_run(f, case));
            }
        }
        let rates: Vec<f64> = best
            .iter()
            .map(|time| case.nodes as f64 / time.as_secs_f64() / 1e6)
            .collect();
        for ((name, _), rate) in IMPLEMENTATIONS.iter().zip(&rates) {
            println!(
                "  {:<9} depth {} {:>9} nodes  {:<12} {:>7.1} Mnps",
                case.name, case.depth, case.nodes, name, rate
            );
        }
        println!(
            "  {:<9} ratio chess-rules / cozy-chess = {:.2}, chess-rules / chess = {:.2}",
            case.name,
            rates[0] / rates[1],
            rates[0] / rates[2]
        );
    }
}

fn bench_perft(c: &mut Criterion) {
    for case in &CASES {
        let mut group = c.benchmark_group(format!("perft/{}/depth-{}", case.name, case.depth));
        group.throughput(Throughput::Elements(case.nodes));
        group.sample_size(10);
        for (name, f) in IMPLEMENTATIONS {
            group.bench_function(name, |b| {
                b.iter(|| f(black_box(case.fen), black_box(case.depth)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench_perft);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and
    // then criterion runs each benchmark once as a smoke test.
    if std::env::args().any(|arg| arg == "--bench") {
        print_summary();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
