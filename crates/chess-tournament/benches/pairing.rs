//! One arena pairing pass over a large pool (`cargo bench -p
//! chess-tournament`): 1,000 waiting players, the most one node's arena is
//! sized for, should pair within 100 ms.

use chess_tournament::arena::{ColorHistory, Pass, Waiting, pair};
use criterion::{Criterion, criterion_group, criterion_main};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn pool(size: u32, rng: &mut StdRng) -> Vec<Waiting<u32>> {
    (0..size)
        .map(|id| Waiting {
            player: id,
            rank: id + 1,
            rating: rng.random_range(800..2800),
            last_opponent: Some(rng.random_range(0..size)).filter(|&last| last != id),
            colors: ColorHistory {
                streak: rng.random_range(-3..=3),
                balance: rng.random_range(-5..=5),
            },
            arrived_at: u64::from(id),
        })
        .collect()
}

fn pairing(c: &mut Criterion) {
    let mut rng = StdRng::seed_from_u64(42);
    for size in [100, 1_000] {
        let waiting = pool(size, &mut rng);
        let pass = Pass::Running {
            max_rank: size,
            only_two_players: false,
        };
        c.bench_function(&format!("arena pairing pass, {size} waiting"), |b| {
            b.iter(|| pair(&waiting, pass, &mut rng));
        });
    }
}

criterion_group!(benches, pairing);
criterion_main!(benches);
