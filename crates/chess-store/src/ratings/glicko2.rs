//! The Glicko-2 rating system (Mark Glickman, "Example of the Glicko-2
//! system", 2013), as pure arithmetic on values: no clock, no store.
//!
//! Lichess rates every game at once rather than in fixed rating periods,
//! so each game is a rating period of one game ([`rate_game`]); a player's
//! deviation first grows by the time since their last rated game
//! ([`Rating::after_inactivity`]), as the paper's step 6 grows it for a
//! period without games.
//!
//! ```
//! use chess_store::ratings::glicko2::{Rating, rate};
//!
//! // The paper's worked example.
//! let player = Rating { rating: 1500.0, deviation: 200.0, volatility: 0.06 };
//! let games = [
//!     (Rating { rating: 1400.0, deviation: 30.0, volatility: 0.06 }, 1.0),
//!     (Rating { rating: 1550.0, deviation: 100.0, volatility: 0.06 }, 0.0),
//!     (Rating { rating: 1700.0, deviation: 300.0, volatility: 0.06 }, 0.0),
//! ];
//! let after = rate(player, &games, 0.5);
//! assert_eq!(format!("{:.2}", after.rating), "1464.05");
//! ```

/// The factor between the Glicko scale (1500 ± RD) and Glicko-2's (0 ± φ).
pub const SCALE: f64 = 173.7178;

/// Where every rating starts, and the most a deviation grows to.
pub const DEFAULT: Rating = Rating {
    rating: 1500.0,
    deviation: 350.0,
    volatility: 0.06,
};

/// The system constant τ, which limits how fast the volatility moves.
/// Lichess's choice (the paper suggests 0.3 to 1.2).
pub const TAU: f64 = 0.75;

/// A rating is provisional while its deviation is above this (lichess's
/// threshold): it is shown with a `?`.
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

/// How long one rating period lasts, in milliseconds, for the growth of an
/// idle player's deviation: lichess counts 0.21436 periods a day, about
/// 4.67 days a period.
pub const PERIOD_MS: f64 = 86_400_000.0 / 0.21436;

/// The paper's convergence tolerance for the volatility's iteration.
const EPSILON: f64 = 0.000_001;

/// A player's rating on the Glicko scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// r, 1500 to start.
    pub rating: f64,
    /// RD, 350 to start.
    pub deviation: f64,
    /// σ, 0.06 to start.
    pub volatility: f64,
}

impl Default for Rating {
    fn default() -> Rating {
        DEFAULT
    }
}

impl Rating {
    /// Whether the rating is still provisional (its deviation is high).
    pub fn is_provisional(&self) -> bool {
        self.deviation > PROVISIONAL_DEVIATION
    }

    /// The rating after `idle_ms` without a rated game: its deviation grows
    /// as over that many rating periods without games (the paper's step 6,
    /// repeated), φ' = √(φ² + σ²·periods), never past the starting 350.
    pub fn after_inactivity(self, idle_ms: i64) -> Rating {
        if idle_ms <= 0 {
            return self;
        }
        let periods = idle_ms as f64 / PERIOD_MS;
        let phi = self.deviation / SCALE;
        let grown = (phi * phi + self.volatility * self.volatility * periods).sqrt() * SCALE;
        Rating {
            deviation: grown.min(DEFAULT.deviation),
            ..self
        }
    }
}

/// The paper's g(φ).
fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

/// The paper's E(μ, μj, φj): the expected score against one opponent.
fn expected(mu: f64, mu_j: f64, phi_j: f64) -> f64 {
    1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp())
}

/// `player`'s rating after one rating period of `games` (each an opponent's
/// rating before the period and the player's score: 1, ½ or 0), with system
/// constant `tau`: the paper's steps 1 to 8. A period without games only
/// grows the deviation (step 6).
pub fn rate(player: Rating, games: &[(Rating, f64)], tau: f64) -> Rating {
    // Step 2: to the Glicko-2 scale.
    let mu = (player.rating - DEFAULT.rating) / SCALE;
    let phi = player.deviation / SCALE;
    let sigma = player.volatility;
    if games.is_empty() {
        return Rating {
            deviation: (phi * phi + sigma * sigma).sqrt() * SCALE,
            ..player
        };
    }
    let opponents: Vec<(f64, f64, f64)> = games
        .iter()
        .map(|(opponent, score)| {
            let mu_j = (opponent.rating - DEFAULT.rating) / SCALE;
            let phi_j = opponent.deviation / SCALE;
            (g(phi_j), expected(mu, mu_j, phi_j), *score)
        })
        .collect();
    // Step 3: the estimated variance v.
    let v = 1.0
        / opponents
            .iter()
            .map(|(g, e, _)| g * g * e * (1.0 - e))
            .sum::<f64>();
    // Step 4: the estimated improvement Δ.
    let improvement: f64 = opponents.iter().map(|(g, e, s)| g * (s - e)).sum();
    let delta = v * improvement;
    // Step 5: the new volatility, by the Illinois algorithm.
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let ex = x.exp();
        let d = phi * phi + v + ex;
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / (tau * tau)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 {
            k += 1.0;
        }
        a - k * tau
    };
    let mut f_a = f(big_a);
    let mut f_b = f(big_b);
    while (big_b - big_a).abs() > EPSILON {
        let big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(big_c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = big_c;
        f_b = f_c;
    }
    let new_sigma = (big_a / 2.0).exp();
    // Step 6: the pre-period deviation.
    let phi_star = (phi * phi + new_sigma * new_sigma).sqrt();
    // Step 7: the new deviation and rating.
    let new_phi = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let new_mu = mu + new_phi * new_phi * improvement;
    // Step 8: back to the Glicko scale.
    Rating {
        rating: new_mu * SCALE + DEFAULT.rating,
        deviation: new_phi * SCALE,
        volatility: new_sigma,
    }
}

/// Both players' ratings after one game between them, rated at once as
/// lichess does: each side's game is a rating period of its own, against
/// the other's rating before the game. `white_score` is 1, ½ or 0.
pub fn rate_game(white: Rating, black: Rating, white_score: f64) -> (Rating, Rating) {
    (
        rate(white, &[(black, white_score)], TAU),
        rate(black, &[(white, 1.0 - white_score)], TAU),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn rating(rating: f64, deviation: f64) -> Rating {
        Rating {
            rating,
            deviation,
            volatility: 0.06,
        }
    }

    /// Glickman's worked example: 1500/200/0.06 beats 1400/30, loses to
    /// 1550/100 and 1700/300, τ = 0.5. The paper prints r' = 1464.06,
    /// RD' = 151.52, σ' = 0.05999 (it rounds μ' = −0.2069 before scaling
    /// back, hence 1464.06 against the unrounded 1464.05).
    #[test]
    fn the_papers_worked_example() {
        let player = rating(1500.0, 200.0);
        let games = [
            (rating(1400.0, 30.0), 1.0),
            (rating(1550.0, 100.0), 0.0),
            (rating(1700.0, 300.0), 0.0),
        ];
        let after = rate(player, &games, 0.5);
        let mu = (after.rating - 1500.0) / SCALE;
        let phi = after.deviation / SCALE;
        assert_eq!(format!("{mu:.4}"), "-0.2069");
        assert_eq!(format!("{phi:.4}"), "0.8722");
        assert_eq!(format!("{:.2}", -0.2069 * SCALE + 1500.0), "1464.06");
        assert!(
            (after.rating - 1464.06).abs() < 0.01,
            "rating {}",
            after.rating
        );
        assert_eq!(format!("{:.2}", after.deviation), "151.52");
        // Printed truncated: σ' = 0.0599959...
        assert_eq!(format!("{:.6}", after.volatility), "0.059996", "{after:?}");
    }

    #[test]
    fn a_period_without_games_only_grows_the_deviation() {
        let player = rating(1500.0, 200.0);
        let after = rate(player, &[], 0.5);
        assert_eq!(after.rating, 1500.0);
        let phi = 200.0 / SCALE;
        assert!((after.deviation / SCALE - (phi * phi + 0.06 * 0.06).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn inactivity_grows_the_deviation_up_to_the_start() {
        let settled = rating(1800.0, 60.0);
        assert_eq!(settled.after_inactivity(0), settled);
        assert_eq!(settled.after_inactivity(-5), settled, "a clock going back");
        let one_period = settled.after_inactivity(PERIOD_MS as i64);
        let phi = 60.0 / SCALE;
        let expected = (phi * phi + 0.06 * 0.06).sqrt() * SCALE;
        assert!((one_period.deviation - expected).abs() < 1e-6);
        assert_eq!(one_period.rating, 1800.0);
        let year = settled.after_inactivity(365 * 86_400_000);
        assert!(year.deviation > 100.0 && year.deviation < 350.0, "{year:?}");
        let forever = settled.after_inactivity(i64::MAX);
        assert_eq!(forever.deviation, 350.0);
        assert!(!settled.is_provisional());
        assert!(DEFAULT.is_provisional());
    }

    #[test]
    fn a_win_and_a_loss_mirror_between_equal_players() {
        let (white, black) = rate_game(DEFAULT, DEFAULT, 1.0);
        assert!(white.rating > 1500.0 && black.rating < 1500.0);
        assert!((white.rating - 1500.0 - (1500.0 - black.rating)).abs() < 1e-9);
        let (white, black) = rate_game(DEFAULT, DEFAULT, 0.5);
        assert!((white.rating - 1500.0).abs() < 1e-9 && (black.rating - 1500.0).abs() < 1e-9);
        assert!(white.deviation < 350.0);
    }

    fn any_rating() -> impl Strategy<Value = Rating> {
        (600.0..2900.0f64, 30.0..350.0f64, 0.03..0.1f64).prop_map(
            |(rating, deviation, volatility)| Rating {
                rating,
                deviation,
                volatility,
            },
        )
    }

    fn any_score() -> impl Strategy<Value = f64> {
        prop_oneof![Just(0.0), Just(0.5), Just(1.0)]
    }

    proptest! {
        /// The same figures as an independent implementation (the
        /// `skillratings` crate's Glicko-2) on random games.
        #[test]
        fn agrees_with_skillratings(
            white in any_rating(),
            black in any_rating(),
            score in any_score(),
        ) {
            use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};
            use skillratings::Outcomes;
            let theirs = |r: Rating| Glicko2Rating {
                rating: r.rating,
                deviation: r.deviation,
                volatility: r.volatility,
            };
            let outcome = match score {
                1.0 => Outcomes::WIN,
                0.0 => Outcomes::LOSS,
                _ => Outcomes::DRAW,
            };
            let config = Glicko2Config { tau: TAU, convergence_tolerance: EPSILON };
            let (w, b) = glicko2(&theirs(white), &theirs(black), &outcome, &config);
            let (ours_w, ours_b) = rate_game(white, black, score);
            for (ours, theirs) in [(ours_w, w), (ours_b, b)] {
                prop_assert!((ours.rating - theirs.rating).abs() < 1e-6, "{ours:?} {theirs:?}");
                prop_assert!((ours.deviation - theirs.deviation).abs() < 1e-6, "{ours:?} {theirs:?}");
                prop_assert!((ours.volatility - theirs.volatility).abs() < 1e-7, "{ours:?} {theirs:?}");
            }
        }

        /// A win never lowers a rating, a loss never raises one.
        #[test]
        fn results_move_ratings_the_right_way(white in any_rating(), black in any_rating()) {
            let (won, lost) = rate_game(white, black, 1.0);
            prop_assert!(won.rating >= white.rating);
            prop_assert!(lost.rating <= black.rating);
            prop_assert!(won.deviation <= (white.deviation.powi(2) + (0.1 * SCALE).powi(2)).sqrt());
        }
    }
}
