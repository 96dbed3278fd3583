//! How long one Dutch round takes (`cargo bench -p chess-tournament --bench
//! swiss`): a 9-round random tournament of 250 and of 1,000 players is
//! played with the engine's own pairings, and every round's pairing is
//! timed. The bars: 250 players within 2 s, 1,000 within 20 s a round on
//! the 2-core machine this project is measured on (docs/tournaments.md).
//! `SWISS_BENCH_SIZES=250,1000` and `SWISS_BENCH_ROUNDS=9` change the run.

use std::time::Instant;

use chess_tournament::swiss::pair_round;
use chess_tournament::swiss::random::{Shape, Simulation};

fn main() {
    let sizes: Vec<u32> = std::env::var("SWISS_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![250, 1_000]);
    let rounds: u32 = std::env::var("SWISS_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9);
    for size in sizes {
        let shape = Shape {
            min_players: size,
            max_players: size,
            min_rounds: rounds,
            max_rounds: rounds,
            ..Shape::default()
        };
        let mut simulation = Simulation::new(u64::from(size), shape);
        let mut times = Vec::new();
        while !simulation.finished() {
            let file = simulation.round_input();
            let start = Instant::now();
            let pairing = pair_round(&file.tournament, &file.unavailable())
                .expect("a random round can be paired");
            let elapsed = start.elapsed();
            times.push(elapsed.as_secs_f64());
            println!(
                "swiss dutch, {size} players, round {}: {:.3} s ({} boards)",
                simulation.completed_rounds + 1,
                elapsed.as_secs_f64(),
                pairing.boards.len()
            );
            simulation.play(&pairing);
        }
        let worst = times.iter().copied().fold(0.0, f64::max);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!("swiss dutch, {size} players: worst round {worst:.3} s, mean {mean:.3} s");
    }
}
