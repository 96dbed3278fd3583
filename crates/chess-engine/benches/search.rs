//! Search speed on a fixed set of positions: `cargo bench -p chess-engine`.
//!
//! Each benchmark is a fixed-depth search by a fresh engine (an empty
//! transposition table), so every run visits the same nodes; criterion's
//! throughput is then nodes per second. A plain summary line per position
//! is printed first.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use chess_engine::{Engine, Level, Limits};
use chess_rules::Position;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

/// (name, FEN, depth): an opening, a tactical middlegame, a quiet
/// middlegame and an endgame.
const POSITIONS: &[(&str, &str, u32)] = &[
    (
        "startpos",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        8,
    ),
    (
        "kiwipete",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        6,
    ),
    (
        "middlegame",
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 8",
        7,
    ),
    ("endgame", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 10),
];

fn bench_search(c: &mut Criterion) {
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for &(name, fen, depth) in POSITIONS {
        let position = Position::from_fen(fen).expect("benchmark fen");
        let stop = AtomicBool::new(false);
        let result =
            Engine::new(Level::Hard, 0).search(&position, &[], Limits::depth(depth), &stop);
        println!(
            "{name:<11} depth {depth:>2}: {:>9} nodes in {:>7.1} ms = {:>8} nodes/s, best {}",
            result.nodes,
            result.elapsed.as_secs_f64() * 1e3,
            result.nps(),
            result
                .best_move
                .map_or_else(|| "none".to_owned(), |m| m.to_string()),
        );
        group.throughput(Throughput::Elements(result.nodes));
        group.bench_function(name, |b| {
            // A fresh engine per run (made outside the timing, and returned
            // so it is dropped outside it too): the same nodes every time.
            b.iter_batched(
                || Engine::new(Level::Hard, 0),
                |mut engine| {
                    let stop = AtomicBool::new(false);
                    black_box(engine.search(
                        black_box(&position),
                        &[],
                        Limits::depth(depth),
                        &stop,
                    ));
                    engine
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
