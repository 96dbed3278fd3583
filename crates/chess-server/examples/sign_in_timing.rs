//! Prints how long a failed sign-in takes for an unknown username and for a
//! wrong password, with the server's real Argon2id parameters (OWASP: 19 MiB,
//! t=2, p=1). The two should be about equal: the answer must not reveal
//! which usernames exist.
//!
//! ```text
//! cargo run --release -p chess-server --example sign_in_timing
//! ```

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use chess_server::auth::account_limits::AccountLimits;
use chess_server::auth::password::{Password, PasswordHasher};
use chess_server::auth::rate_limit::{Backoff, Limit, SignInLimits};
use chess_server::auth::sign_in::sign_in;
use chess_store::AccountRow;
use chess_store::accounts::Username;
use uuid::Uuid;

const ROUNDS: usize = 30;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hasher = PasswordHasher::owasp(2)?;
    // No lock-outs while measuring.
    let unlimited = Limit {
        max: usize::MAX,
        window: Duration::from_secs(1),
    };
    let no_delays = Backoff {
        free: usize::MAX,
        window: Duration::from_secs(1),
        first_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
    };
    let limits = AccountLimits::in_memory(
        SignInLimits::new(unlimited, unlimited, no_delays),
        unlimited,
    );
    let address = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let right = Password::parse("correct horse battery".to_owned())?;
    let wrong = Password::parse("wrong horse battery".to_owned())?;
    let account = AccountRow {
        player_id: Uuid::new_v4(),
        username: "Magnus".to_owned(),
        password_hash: hasher.hash(&right).await?,
        must_change_password: false,
    };
    let known = Username::parse("Magnus")?;
    let unknown = Username::parse("Nobody")?;

    let mut wrong_password = Vec::with_capacity(ROUNDS);
    let mut unknown_user = Vec::with_capacity(ROUNDS);
    // Interleaved, each going first in turn, so drift in machine load and
    // any order effect hit both alike.
    for round in 0..ROUNDS {
        for unknown_first in [round % 2 == 0, round % 2 == 1] {
            let start = Instant::now();
            if unknown_first {
                let _ = sign_in(
                    &hasher,
                    &limits,
                    &unknown,
                    &wrong,
                    None,
                    address,
                    Instant::now(),
                )
                .await;
                unknown_user.push(start.elapsed());
            } else {
                let _ = sign_in(
                    &hasher,
                    &limits,
                    &known,
                    &wrong,
                    Some(&account),
                    address,
                    Instant::now(),
                )
                .await;
                wrong_password.push(start.elapsed());
            }
        }
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let (wrong_ms, unknown_ms) = (
        median(&mut wrong_password).as_secs_f64() * 1000.0,
        median(&mut unknown_user).as_secs_f64() * 1000.0,
    );
    println!("failed sign-in, median of {ROUNDS} (Argon2id m=19456 KiB, t=2, p=1):");
    println!("  wrong password:   {wrong_ms:.1} ms");
    println!("  unknown username: {unknown_ms:.1} ms");
    println!(
        "  difference:       {:.1} %",
        (unknown_ms - wrong_ms) / wrong_ms * 100.0
    );
    Ok(())
}
